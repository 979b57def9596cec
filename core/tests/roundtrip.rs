//! File-based tests of the Tile IR text format and verifier.
//!
//! - Every `*.tir` file under `core/tests/` (recursively, except `errors/`
//!   folders) must parse, verify, and print back to exactly its own text.
//!   With `TILEC_BLESS=1` a file that parses but prints differently is
//!   rewritten to the printed text instead (review the diff).
//! - Every `*.tir` file in an `errors/` folder starts with an expectation
//!   comment: `# ERROR: <line>:<col>: <substring>` (parsing fails there
//!   with a message containing the substring) or `# VERIFY-ERROR:
//!   <substring>` (parsing succeeds and the verifier, with the checks of
//!   written IR, reports an error whose message contains the substring).
//! - Mutated corpus files never make the parser, the printer or the
//!   verifier panic, and whatever parses prints to a fixed point.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tilec_core::ir::verify::{verify_input_module, verify_module};
use tilec_core::text::{parse_module, print_module};

fn tests_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every `.tir` file under `dir`, sorted.
fn tir_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "tir") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn is_error_case(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "errors")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A line diff (longest common subsequence), `-` for expected lines and
/// `+` for actual ones, with unchanged lines as context.
fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("  {:>4} {}\n", i + 1, a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+      {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {:>4} {}\n", i + 1, a[i]));
            i += 1;
        }
    }
    if !expected.ends_with('\n') || !actual.ends_with('\n') {
        out.push_str("(a text does not end with a newline)\n");
    }
    out
}

#[test]
fn every_tir_file_round_trips() {
    let bless = std::env::var_os("TILEC_BLESS").is_some_and(|v| v == "1");
    let files: Vec<PathBuf> = tir_files(&tests_root())
        .into_iter()
        .filter(|p| !is_error_case(p))
        .collect();
    let ir_files = files
        .iter()
        .filter(|p| p.starts_with(tests_root().join("ir")));
    assert!(
        ir_files.count() >= 12,
        "the hand-written corpus went missing"
    );
    let mut failures = Vec::new();
    for path in &files {
        let text = read(path);
        let module = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}:{e}", path.display()));
                continue;
            }
        };
        if let Err(errors) = verify_module(&module) {
            let list: Vec<String> = errors.iter().map(|(f, e)| format!("  @{f}: {e}")).collect();
            failures.push(format!(
                "{}: does not verify:\n{}",
                path.display(),
                list.join("\n")
            ));
        }
        let printed = print_module(&module);
        if printed != text {
            if bless {
                std::fs::write(path, &printed)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            } else {
                failures.push(format!(
                    "{}: printed text differs (- file, + printed):\n{}",
                    path.display(),
                    line_diff(&text, &printed)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// The examples of `docs/ir.md` that are whole modules (code blocks
/// starting with the header line) are canonical text too.
#[test]
fn documentation_examples_round_trip() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ir.md");
    let doc = read(&doc_path);
    let mut examples = 0;
    for block in doc.split("```").skip(1).step_by(2) {
        let text = block
            .trim_start_matches(|c: char| c.is_alphanumeric())
            .trim_start_matches('\n');
        if !text.starts_with("tile_ir ") {
            continue;
        }
        examples += 1;
        let module =
            parse_module(text).unwrap_or_else(|e| panic!("docs/ir.md example: {e}\n{text}"));
        assert_eq!(verify_module(&module), Ok(()));
        let printed = print_module(&module);
        assert!(
            printed == text,
            "docs/ir.md example is not canonical:\n{}",
            line_diff(text, &printed)
        );
    }
    assert!(examples >= 1, "docs/ir.md lost its example");
}

/// What an `errors/` file expects.
enum Expectation {
    Parse {
        line: u32,
        column: u32,
        needle: String,
    },
    Verify {
        needle: String,
    },
}

fn expectation(path: &Path, text: &str) -> Expectation {
    let first = text.lines().next().unwrap_or_default();
    if let Some(rest) = first.strip_prefix("# VERIFY-ERROR:") {
        return Expectation::Verify {
            needle: rest.trim().to_string(),
        };
    }
    let rest = first
        .strip_prefix("# ERROR:")
        .unwrap_or_else(|| panic!("{}: first line is not `# ERROR: ...`", path.display()));
    let mut parts = rest.trim().splitn(3, ':');
    let mut number = || -> u32 {
        parts
            .next()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: malformed `# ERROR:` line", path.display()))
    };
    let (line, column) = (number(), number());
    let needle = parts.next().unwrap_or_default().trim().to_string();
    Expectation::Parse {
        line,
        column,
        needle,
    }
}

#[test]
fn error_files_fail_as_expected() {
    let files: Vec<PathBuf> = tir_files(&tests_root())
        .into_iter()
        .filter(|p| is_error_case(p))
        .collect();
    assert!(files.len() >= 20, "the error corpus went missing");
    let mut failures = Vec::new();
    for path in &files {
        let text = read(path);
        let result = parse_module(&text);
        match (expectation(path, &text), result) {
            (Expectation::Parse { .. }, Ok(_)) => {
                failures.push(format!("{}: parsed, expected an error", path.display()));
            }
            (
                Expectation::Parse {
                    line,
                    column,
                    needle,
                },
                Err(e),
            ) => {
                if (e.line, e.column) != (line, column) || !e.message.contains(&needle) {
                    failures.push(format!(
                        "{}: expected {line}:{column}: ...{needle}..., got {e}",
                        path.display()
                    ));
                }
            }
            (Expectation::Verify { .. }, Err(e)) => {
                failures.push(format!("{}:{e}", path.display()));
            }
            // As IR enters the compiler: with the checks of written IR.
            (Expectation::Verify { needle }, Ok(module)) => match verify_input_module(&module) {
                Ok(()) => failures.push(format!("{}: verified, expected an error", path.display())),
                Err(errors) => {
                    if !errors.iter().any(|(_, e)| e.to_string().contains(&needle)) {
                        let list: Vec<String> = errors.iter().map(|(_, e)| e.to_string()).collect();
                        failures.push(format!(
                            "{}: no error mentions {needle:?}; got:\n  {}",
                            path.display(),
                            list.join("\n  ")
                        ));
                    }
                }
            },
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Parses `text` and, when it parses, checks that printing reaches a fixed
/// point and that the verifier and printer survive. Panics propagate.
fn survive(text: &str) {
    if let Ok(module) = parse_module(text) {
        let _ = verify_module(&module);
        let printed = print_module(&module);
        let reparsed = parse_module(&printed)
            .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
        assert_eq!(
            print_module(&reparsed),
            printed,
            "printing is not idempotent"
        );
    }
}

fn corpus() -> Vec<String> {
    tir_files(&tests_root()).iter().map(|p| read(p)).collect()
}

/// Characters worth inserting: every piece of syntax and a few odd ones.
const ALPHABET: &[&str] = &[
    "%", "@", "(", ")", "[", "]", "{", "}", ",", ":", "=", "+:", "->", "-", "+", "*", "//", "<",
    ">", "!", "~", "&&", "||", "\"", "#", "\n", " ", "0", "9", "1e400", "-3", "f32(", "x", "%i",
    "\\", "é", "\u{0}", "kernel", "}", "{{{{", "((((",
];

#[test]
fn deterministic_mutations_never_panic() {
    for text in corpus() {
        let chars: Vec<char> = text.chars().collect();
        let n = chars.len();
        // Every truncation point, at a stride that keeps the test quick.
        for cut in (0..n).step_by(7) {
            survive(&chars[..cut].iter().collect::<String>());
        }
        for i in (0..n).step_by(13) {
            let mut deleted = chars.clone();
            deleted.remove(i);
            survive(&deleted.iter().collect::<String>());
            let insert = ALPHABET[i % ALPHABET.len()];
            let mut inserted: String = chars[..i].iter().collect();
            inserted.push_str(insert);
            inserted.extend(&chars[i..]);
            survive(&inserted);
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let expr = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let text = format!(
        "tile_ir 0.1\n\nfunc @f(%A: global i32[1]) {{\n  kernel grid(1) threads(1) block(%b) thread(%t) {{\n    %A[0] = {expr}\n  }}\n}}\n"
    );
    let err = parse_module(&text).expect_err("too deep");
    assert!(err.message.contains("nesting"), "{err}");
    let unary = format!(
        "tile_ir 0.1\n\nfunc @f(%A: global i32[1]) {{\n  kernel grid(1) threads(1) block(%b) thread(%t) {{\n    %A[0] = {}1\n  }}\n}}\n",
        "-".repeat(100_000)
    );
    assert!(parse_module(&unary).is_err());
    let blocks = format!(
        "tile_ir 0.1\n\nfunc @f() {}{}\n",
        "{ if true ".repeat(50_000),
        "}".repeat(50_000)
    );
    assert!(parse_module(&blocks).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random splices of corpus text and syntax pieces.
    #[test]
    fn random_mutations_never_panic(
        file in 0usize..64,
        edits in proptest::collection::vec((0usize..100_000, 0usize..8, 0usize..64), 1..6),
    ) {
        let corpus = corpus();
        let mut chars: Vec<char> = corpus[file % corpus.len()].chars().collect();
        for (at, len, piece) in edits {
            let at = at % (chars.len() + 1);
            let end = (at + len).min(chars.len());
            let insert: Vec<char> = ALPHABET[piece % ALPHABET.len()].chars().collect();
            chars.splice(at..end, insert);
        }
        survive(&chars.iter().collect::<String>());
    }

    /// Arbitrary strings.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        survive(&text);
        survive(&format!("tile_ir 0.1\n\nfunc @f() {{\n{text}\n}}\n"));
    }
}
