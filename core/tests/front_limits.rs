//! Limits of the front end, tried as a hostile user would: sources too
//! large or too deep for the compiler end in a diagnostic, never in a
//! stack overflow (`docs/tilelang-support.md`, "Limits").

use tilec_core::front::{Severity, line_col, py};
use tilec_core::ir::MAX_EXPR_DEPTH;

/// A kernel whose `T.Parallel` body stores a sum of `terms` loads of
/// `A[i]` (on line 9).
fn sum_kernel(terms: usize) -> String {
    let sum = vec!["A[i]"; terms].join(" + ");
    format!(
        "import tilelang\n\
         import tilelang.language as T\n\
         \n\
         \n\
         @T.prim_func\n\
         def main(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n\
         \x20   with T.Kernel(1, threads=128) as bx:\n\
         \x20       for i in T.Parallel(128):\n\
         \x20           B[i] = {sum}\n"
    )
}

/// The errors of compiling `source`: (code, line, message).
fn errors(source: &str) -> Vec<(String, usize, String)> {
    let out = py::compile(source, &py::Options::default());
    out.diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let line = line_col(source, d.primary.span.start).0;
            (d.code.to_string(), line, d.message.clone())
        })
        .collect()
}

#[test]
fn a_sum_as_deep_as_the_limit_compiles() {
    // `n` terms nest `n` levels deep (the first load is 2 with its index).
    let source = sum_kernel(MAX_EXPR_DEPTH as usize - 1);
    assert_eq!(errors(&source), Vec::new());
}

#[test]
fn a_staged_sum_deeper_than_the_limit_is_refused_at_its_line() {
    let source = sum_kernel(MAX_EXPR_DEPTH as usize + 50);
    let errors = errors(&source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (code, line, message) = &errors[0];
    assert_eq!((code.as_str(), *line), ("T0114", 9), "{message}");
    assert!(
        message.contains(&format!("the limit is {MAX_EXPR_DEPTH}")),
        "{message}"
    );
}

#[test]
fn a_12000_term_sum_is_refused_at_its_line() {
    let source = sum_kernel(12_000);
    let errors = errors(&source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (code, line, message) = &errors[0];
    assert_eq!((code.as_str(), *line), ("T0114", 9), "{message}");
    assert!(
        message.contains("a chain of 12000 operands") && message.contains("the limit is 1000"),
        "{message}"
    );
}

#[test]
fn a_100000_term_sum_is_refused_not_a_crash() {
    let source = sum_kernel(100_000);
    let errors = errors(&source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].0.as_str(), errors[0].1), ("T0114", 9));
}

#[test]
fn deep_nesting_other_than_a_chain_is_refused_too() {
    // `-(-(-(...A[i]...)))`: unary minus nests down its operand.
    let neg = format!("{}A[i]{}", "-(".repeat(5_000), ")".repeat(5_000));
    let source = sum_kernel(1).replace("A[i]\n", &format!("{neg}\n"));
    let errors = errors(&source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].0.as_str(), errors[0].1), ("T0114", 9));
}

#[test]
fn a_sum_built_up_in_a_python_loop_is_refused_too() {
    let source = "import tilelang\n\
                  import tilelang.language as T\n\
                  \n\
                  \n\
                  def total(x, n):\n\
                  \x20   s = x\n\
                  \x20   for k in range(n):\n\
                  \x20       s = s + x\n\
                  \x20   return s\n\
                  \n\
                  \n\
                  @T.prim_func\n\
                  def main(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n\
                  \x20   with T.Kernel(1, threads=128) as bx:\n\
                  \x20       for i in T.Parallel(128):\n\
                  \x20           B[i] = total(A[i], 5000)\n";
    let errors = errors(source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].0.as_str(), errors[0].1), ("T0114", 16));
    assert!(errors[0].2.contains("5002 levels deep"), "{}", errors[0].2);
}

#[test]
fn a_helper_module_nested_too_deeply_is_refused_not_a_crash() {
    let dir = std::env::temp_dir().join(format!("tilec-front-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let helper = format!("TOTAL = {}\n", vec!["1"; 100_000].join(" + "));
    std::fs::write(dir.join("deep_helper.py"), helper).unwrap_or_else(|e| panic!("{e}"));
    let source = "import tilelang\n\
                  import tilelang.language as T\n\
                  import deep_helper\n\
                  \n\
                  \n\
                  @T.prim_func\n\
                  def main(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n\
                  \x20   with T.Kernel(1, threads=128) as bx:\n\
                  \x20       for i in T.Parallel(128):\n\
                  \x20           B[i] = A[i] * deep_helper.TOTAL\n";
    let path = dir.join("kernel.py");
    let out = py::compile_file(source, Some(&path), &py::Options::default());
    let _ = std::fs::remove_dir_all(&dir);
    // The import fails with T0114; the use of the module reports it.
    let errors: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, "T0108", "{errors:?}");
    assert!(
        errors[0].notes.iter().any(|n| n.contains("T0114")),
        "{errors:?}"
    );
}

#[test]
fn a_kernel_expression_nested_too_deeply_is_refused() {
    let options = py::Options {
        kernel: Some(format!("main({})", vec!["1"; 5_000].join(" + "))),
        ..py::Options::default()
    };
    let source = "import tilelang\nimport tilelang.language as T\n\n\ndef main(n):\n    return n\n";
    let out = py::compile(source, &options);
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec!["T0114"], "{:?}", out.diagnostics);
}
