//! The Tile IR reader bounds expression nesting, tried as a hostile user
//! would: a left-associative chain is read in a loop, but every operand
//! nests the expression built one level deeper, and the verifier, the
//! printer, the passes and the lowering recurse over that nesting.

use tilec_core::ir::MAX_EXPR_DEPTH;
use tilec_core::ir::verify::verify_module;
use tilec_core::text::{parse_module, print_module};

/// A kernel storing the sum of `terms` loads (line 6).
fn chain(terms: usize) -> String {
    let sum = vec!["%A[%i]"; terms].join(" + ");
    format!(
        "tile_ir 0.1\n\
         \n\
         func @main(%A: global f32[128], %B: global f32[128]) {{\n\
         \x20 kernel grid(1) threads(128) block(%bx) thread(%tx) {{\n\
         \x20   parallel (%i < 128) {{\n\
         \x20     %B[%i] = {sum}\n\
         \x20   }}\n\
         \x20 }}\n\
         }}\n"
    )
}

#[test]
fn a_chain_as_deep_as_the_limit_reads_verifies_and_prints_back() {
    // A load is 2 deep (its index is 1); each further operand adds one.
    let text = chain(MAX_EXPR_DEPTH as usize - 1);
    let module = parse_module(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(verify_module(&module), Ok(()));
    assert_eq!(print_module(&module), text);
}

#[test]
fn a_chain_one_deeper_is_refused_at_its_line() {
    let e = match parse_module(&chain(MAX_EXPR_DEPTH as usize)) {
        Ok(_) => panic!("a chain deeper than the limit was read"),
        Err(e) => e,
    };
    assert_eq!(e.line, 6, "{e}");
    assert!(
        e.message
            .contains(&format!("nested deeper than {MAX_EXPR_DEPTH} levels")),
        "{e}"
    );
}

#[test]
fn a_12000_term_chain_is_refused_not_a_stack_overflow() {
    // Before the bound, this parsed; printing or verifying it overflowed
    // a test thread's stack.
    match parse_module(&chain(12_000)) {
        Ok(module) => {
            let _ = verify_module(&module);
            panic!("a 12,000-term chain was read");
        }
        Err(e) => assert!(e.message.contains("nested deeper than"), "{e}"),
    }
}
