//! Fuzz target: the Tile IR text parser and printer.
//!
//! The input, read as UTF-8, is handed to `parse_module`, which must never
//! panic. When it parses, the printed module must parse again and print to
//! the same text (printing is canonical: `print(parse(print(parse(s))))`
//! equals `print(parse(s))`), and the verifier must not panic on it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tilec_core::ir::verify::verify_module;
use tilec_core::text::{parse_module, print_module};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = parse_module(text) else {
        return;
    };
    let _ = verify_module(&module);
    let printed = print_module(&module);
    let reparsed = parse_module(&printed)
        .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
    assert_eq!(
        print_module(&reparsed),
        printed,
        "printing is not a fixed point"
    );
});
