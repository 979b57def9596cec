//! The front end never panics: mutated versions of every test and example
//! file, and arbitrary text, compile to a module or to diagnostics.
//!
//! This is the stable-Rust companion of the `front_end` fuzz target in
//! `fuzz/`: it runs in every `cargo test`.

use proptest::prelude::*;
use std::path::Path;
use tilec_core::front::py;

fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/front", "tests/front/errors", "../examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "py")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                files.push(text);
            }
        }
    }
    files
}

/// One edit of a source text at a character position.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Truncate(usize),
    SwapLines(usize, usize),
}

fn apply(text: &str, edit: &Edit) -> String {
    let chars: Vec<char> = text.chars().collect();
    let clamp = |i: usize| {
        if chars.is_empty() {
            0
        } else {
            i % (chars.len() + 1)
        }
    };
    match edit {
        Edit::Delete(at, len) => {
            let a = clamp(*at);
            let b = (a + len).min(chars.len());
            chars[..a].iter().chain(&chars[b..]).collect()
        }
        Edit::Insert(at, s) => {
            let a = clamp(*at);
            let mut out: String = chars[..a].iter().collect();
            out.push_str(s);
            out.extend(&chars[a..]);
            out
        }
        Edit::Truncate(at) => chars[..clamp(*at)].iter().collect(),
        Edit::SwapLines(a, b) => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let (i, j) = (a % lines.len(), b % lines.len());
                lines.swap(i, j);
            }
            lines.join("\n")
        }
    }
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let fragments = prop::sample::select(vec![
        "T.",
        "(",
        ")",
        "[",
        "]",
        ":",
        "\n    ",
        "\n",
        "0",
        "-1",
        "1e308",
        "**",
        "//",
        "%",
        ",",
        "=",
        "==",
        " if ",
        " else ",
        "for i in T.Parallel(",
        "T.copy(",
        "T.gemm(",
        "with T.Kernel(",
        "lambda: ",
        "*",
        "not ",
        "None",
        "\"float16\"",
        "2 ** 70",
        "9223372036854775807",
        "-9223372036854775807 - 1",
        "2147483647",
        "range(",
        "enumerate(",
        "math.gcd(",
        "math.lcm(",
        "T.ceildiv(",
        "[1::",
        " * 1048576",
        "del ",
        " is not ",
        "shape[1:]",
        "[::2]",
        "T.alloc_var(",
        "return ",
        "yield ",
        "@T.macro\n",
        "while True:\n    pass\n",
    ]);
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, l)| Edit::Delete(a, l)),
        (any::<usize>(), fragments).prop_map(|(a, s)| Edit::Insert(a, s.to_string())),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn mutated_files_do_not_panic(index in any::<usize>(), edits in prop::collection::vec(edit_strategy(), 1..4)) {
        let files = corpus();
        prop_assume!(!files.is_empty());
        let mut text = files[index % files.len()].clone();
        for e in &edits {
            text = apply(&text, e);
        }
        let out = py::compile(&text, &py::Options::default());
        // Either a module or at least one error, never both missing.
        prop_assert!(out.module.is_some() || out.has_errors());
    }

    #[test]
    fn arbitrary_text_does_not_panic(text in "\\PC{0,200}", kernel in prop::option::of("[a-z_(),0-9=]{0,20}")) {
        let options = py::Options { kernel, ..py::Options::default() };
        let out = py::compile(&text, &options);
        prop_assert!(out.module.is_some() || out.has_errors());
    }
}

/// Deep nesting and long compile-time loops end in a diagnostic.
#[test]
fn limits_give_diagnostics() {
    let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let out = py::compile(&deep, &py::Options::default());
    assert!(out.has_errors());
    let recursion = "def f(n):\n    return f(n + 1)\n\nX = f(0)\n\n@T.prim_func\ndef k(A: T.Tensor((X,), 'float32')):\n    pass\n";
    let out = py::compile(recursion, &py::Options::default());
    assert!(out.has_errors());
    let spin = "import tilelang.language as T\nn = 0\nwhile True:\n    n += 1\n\n@T.prim_func\ndef k(A: T.Tensor((n,), 'float32')):\n    pass\n";
    let out = py::compile(spin, &py::Options::default());
    assert!(out.has_errors());
}
