//! Fuzz target: the TileLang front end.
//!
//! The input, read as UTF-8, is a kernel file. It is compiled twice:
//!
//! 1. with default options (the file's single builder, called with its
//!    defaults);
//! 2. with options taken from the input itself, in the directive syntax of
//!    the front-end file tests (`core/tests/front.rs`), so that those files
//!    are good seeds: the text after the last `# KERNEL:` becomes
//!    `options.kernel`, and each `# DEFINE: NAME=VALUE` a `-D` binding. An
//!    input without a `# KERNEL:` line uses its last line as the `--kernel`
//!    expression instead, so the expression parser and the selection code
//!    see arbitrary text too.
//!
//! Besides not panicking, every compilation must keep the front end's
//! contract:
//! - it produces a module exactly when it reports no error;
//! - every diagnostic has a real code (never the internal cascade marker), a
//!   message, and labels that lie inside the file (or are unknown);
//! - a produced module verifies, and its printed text parses back to the
//!   same text.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tilec_core::front::py::{Options, Output, compile};
use tilec_core::front::{Diagnostic, line_col};
use tilec_core::ir::verify::verify_module;
use tilec_core::text::{parse_module, print_module};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let out = compile(source, &Options::default());
    check(source, &out);

    let options = options_from(source);
    let out = compile(source, &options);
    check(source, &out);
});

/// `--kernel` and `-D` options derived from the input.
fn options_from(source: &str) -> Options {
    let mut options = Options::default();
    for line in source.lines() {
        if let Some(k) = directive(line, "KERNEL") {
            options.kernel = Some(k.to_string());
        }
        if let Some(d) = directive(line, "DEFINE")
            && let Some((name, value)) = d.split_once('=')
        {
            options
                .defines
                .insert(name.trim().to_string(), value.trim().to_string());
        }
    }
    if options.kernel.is_none() {
        options.kernel = Some(source.lines().last().unwrap_or_default().to_string());
    }
    options
}

/// The text after `# KEY:` on a line, as the file tests read directives.
fn directive<'s>(line: &'s str, key: &str) -> Option<&'s str> {
    let marker = format!("# {key}:");
    let idx = line.find(&marker)?;
    Some(line[idx + marker.len()..].trim())
}

fn check(source: &str, out: &Output) {
    for d in &out.diagnostics {
        check_diagnostic(source, d);
    }
    assert_eq!(
        out.module.is_some(),
        !out.has_errors(),
        "a module must be produced exactly when no error is reported: {:?}",
        out.diagnostics
    );
    if let Some(module) = &out.module {
        if let Err(errors) = verify_module(module) {
            panic!("the front end produced IR that does not verify: {errors:?}");
        }
        let printed = print_module(module);
        let reparsed = parse_module(&printed)
            .unwrap_or_else(|e| panic!("printed IR does not parse: {e}\n{printed}"));
        assert_eq!(
            print_module(&reparsed),
            printed,
            "printed IR does not round-trip"
        );
    }
}

fn check_diagnostic(source: &str, d: &Diagnostic) {
    let code = d.code;
    let well_formed = code.len() == 5
        && (code.starts_with('T') || code.starts_with('W'))
        && code[1..].bytes().all(|b| b.is_ascii_digit());
    assert!(
        well_formed,
        "diagnostic with a malformed code {code:?}: {d:?}"
    );
    assert!(!d.message.is_empty(), "diagnostic without a message: {d:?}");
    let len = u32::try_from(source.len()).unwrap_or(u32::MAX);
    for label in std::iter::once(&d.primary).chain(&d.secondary) {
        let span = label.span;
        if span.is_unknown() {
            continue;
        }
        assert!(
            span.start <= span.end && span.end <= len,
            "label {span:?} outside the {len}-byte file: {d:?}"
        );
        // The renderer turns offsets into positions; that must not panic.
        let _ = line_col(source, span.start);
        let _ = line_col(source, span.end);
    }
}
