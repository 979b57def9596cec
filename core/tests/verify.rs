//! Tests of `tilec_core::verify`: obligations as data, their discharge by
//! Z3, and counterexamples replayed in the reference interpreter.
//!
//! # The corpus
//! Every `*.py` file directly under `core/tests/verify/` is a deliberately
//! wrong kernel (compiled with its builder's defaults, verified for
//! sm_80). Each must have at least one required obligation refuted, and
//! the list of obligations not proved, with their counterexamples, must
//! equal `<name>.expected` beside it; `TILEC_BLESS=1` writes it instead
//! (review the diff). A file with a `# REPLAY: out-of-bounds` line is run
//! in the reference interpreter with the symbolic sizes of its first
//! refuted obligation's counterexample, and must fail with an
//! out-of-bounds error at that obligation's statement. A file with a
//! `# REPLAY: race` line is lowered for sm_80 and run in the SIMT
//! interpreter, which must report a race. A file with `# REPLAY:
//! unwritten` stores outside a global tensor, which the interpreter drops
//! silently: run with the counterexample's sizes, part of the output must
//! stay unwritten.
//!
//! Files under `core/tests/verify/good/` and every example kernel must
//! verify with every obligation proved.

use std::path::{Path, PathBuf};

use tilec_core::front::py;
use tilec_core::interp::{self, InterpError, RunOptions, SymbolValues, Tensor};
use tilec_core::ir::{Function, Module};
use tilec_core::verify::{
    self, Formula, Obligation, ObligationKind, Obligations, Outcome, Role, Term, VerifyOptions,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn py_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    files.sort();
    files
}

fn compile(path: &Path) -> (String, Module) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let out = py::compile(&text, &py::Options::default());
    let errors: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{}: no module", path.display()));
    (text, module)
}

fn options() -> VerifyOptions {
    let target = tilec_core::target::builtin("sm_80").expect("sm_80 is built in");
    VerifyOptions::for_target(&target)
}

fn verify_function(function: &Function) -> (Obligations, Vec<Outcome>) {
    let options = options();
    let obligations =
        verify::generate(function, &options).unwrap_or_else(|e| panic!("`{}`: {e}", function.name));
    let outcomes = verify::solve::discharge(&obligations, &options);
    (obligations, outcomes)
}

fn line_of(text: &str, obligation: &Obligation) -> usize {
    tilec_core::front::line_col(text, obligation.span.start).0
}

/// The obligations not proved, one paragraph each.
fn verdicts(text: &str, obligations: &Obligations, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    for (o, r) in obligations.items.iter().zip(outcomes) {
        let required = if o.required { "" } else { " (advisory)" };
        match r {
            Outcome::Proved => continue,
            Outcome::Refuted(cx) => {
                out.push_str(&format!(
                    "refuted {} {}{required} at line {}\n",
                    o.kind.name(),
                    o.subject,
                    line_of(text, o)
                ));
                out.push_str(&format!("  counterexample: {}\n", cx.assignment()));
                for (label, value) in &cx.shown {
                    out.push_str(&format!("  {label} = {value}\n"));
                }
            }
            Outcome::Unknown(reason) => out.push_str(&format!(
                "unknown {} {}{required} at line {}: {reason}\n",
                o.kind.name(),
                o.subject,
                line_of(text, o)
            )),
        }
    }
    out
}

#[test]
fn wrong_kernels_are_refuted_as_expected() {
    let dir = root().join("core/tests/verify");
    let files = py_files(&dir);
    assert!(files.len() >= 5, "the corpus is missing");
    let bless = std::env::var_os("TILEC_BLESS").is_some();
    let mut failures = Vec::new();
    for path in files {
        let (text, module) = compile(&path);
        let mut got = String::new();
        let mut refuted = false;
        for function in &module.functions {
            let (obligations, outcomes) = verify_function(function);
            refuted |= obligations
                .items
                .iter()
                .zip(&outcomes)
                .any(|(o, r)| o.required && matches!(r, Outcome::Refuted(_)));
            got.push_str(&verdicts(&text, &obligations, &outcomes));
        }
        if !refuted {
            failures.push(format!(
                "{}: no required obligation refuted",
                path.display()
            ));
        }
        let expected_path = path.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &got).expect("write expectation");
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if want != got {
            failures.push(format!(
                "{}: verdicts differ from {} (TILEC_BLESS=1 rewrites it)\n--- expected\n{want}--- got\n{got}",
                path.display(),
                expected_path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `function` on zero-filled arguments shaped by `symbols`.
fn run_with_symbols(function: &Function, symbols: SymbolValues) -> Result<(), InterpError> {
    let shapes = interp::param_shapes(function, &symbols)?;
    let mut args: Vec<Tensor> = function
        .params
        .iter()
        .zip(shapes)
        .map(|(param, shape)| Tensor::zeros(function.buffers[param.buffer].dtype, shape))
        .collect();
    let options = RunOptions {
        symbols,
        ..RunOptions::default()
    };
    interp::run_with(function, &mut args, &options)
}

#[test]
fn counterexamples_replay_as_interpreter_faults() {
    let dir = root().join("core/tests/verify");
    let mut replayed = 0;
    for path in py_files(&dir) {
        let (text, module) = compile(&path);
        if !text.lines().any(|l| l.trim() == "# REPLAY: out-of-bounds") {
            continue;
        }
        let function = &module.functions[0];
        let (obligations, outcomes) = verify_function(function);
        let (obligation, cx) = obligations
            .items
            .iter()
            .zip(&outcomes)
            .find_map(|(o, r)| match r {
                Outcome::Refuted(cx) if o.required => Some((o, cx)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: nothing refuted", path.display()));
        assert!(
            !cx.approximate,
            "{}: approximate counterexample",
            path.display()
        );
        let symbols: SymbolValues = cx
            .values
            .iter()
            .filter(|(_, role, _)| *role == Role::Size)
            .map(|(name, _, value)| (name.clone(), i64::try_from(*value).expect("small size")))
            .collect();
        // The same kernel with sizes the verifier proves safe runs clean, so
        // the fault below is the counterexample's doing.
        match run_with_symbols(function, symbols.clone()) {
            Err(InterpError::OutOfBounds { span, buffer, .. }) => {
                assert_eq!(
                    span,
                    obligation.span,
                    "{}: fault at another statement than `{}`",
                    path.display(),
                    obligation.subject
                );
                if let ObligationKind::InBounds { buffer: b, .. } = &obligation.kind {
                    assert_eq!(&buffer, b, "{}", path.display());
                }
            }
            other => panic!(
                "{}: replaying {symbols:?} gave {other:?}, expected an out-of-bounds fault",
                path.display()
            ),
        }
        replayed += 1;
    }
    assert!(replayed >= 3, "only {replayed} kernels replayed");
}

#[test]
fn dropped_global_stores_replay_as_unwritten_outputs() {
    // Out of a global tensor, the interpreter drops a store silently (the
    // out-of-bounds rule), so the fault shows as output never written: run
    // with the counterexample's sizes and outputs poisoned with NaN.
    let dir = root().join("core/tests/verify");
    let mut replayed = 0;
    for path in py_files(&dir) {
        let (text, module) = compile(&path);
        if !text.lines().any(|l| l.trim() == "# REPLAY: unwritten") {
            continue;
        }
        let function = &module.functions[0];
        let (obligations, outcomes) = verify_function(function);
        let (buffer, cx) = obligations
            .items
            .iter()
            .zip(&outcomes)
            .find_map(|(o, r)| match (&o.kind, r) {
                (
                    ObligationKind::InBounds {
                        buffer,
                        store: true,
                        ..
                    },
                    Outcome::Refuted(cx),
                ) => Some((buffer.clone(), cx)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: no store refuted", path.display()));
        let symbols: SymbolValues = cx
            .values
            .iter()
            .filter(|(_, role, _)| *role == Role::Size)
            .map(|(name, _, value)| (name.clone(), i64::try_from(*value).expect("small size")))
            .collect();
        let shapes = interp::param_shapes(function, &symbols).expect("shapes");
        let mut args: Vec<Tensor> = function
            .params
            .iter()
            .zip(shapes)
            .map(|(param, shape)| {
                let b = &function.buffers[param.buffer];
                let fill = if b.name == buffer { f64::NAN } else { 1.0 };
                let len = shape.iter().product();
                Tensor::from_f64(b.dtype, shape, vec![fill; len]).expect("tensor")
            })
            .collect();
        let options = RunOptions {
            symbols: symbols.clone(),
            ..RunOptions::default()
        };
        interp::run_with(function, &mut args, &options).expect("runs");
        let output = function
            .params
            .iter()
            .position(|p| function.buffers[p.buffer].name == buffer)
            .expect("the stored buffer is a parameter");
        let values = args[output].to_f64_vec();
        assert!(
            values.iter().any(|v| v.is_nan()),
            "{}: with {symbols:?} every element of `{buffer}` was written",
            path.display()
        );
        replayed += 1;
    }
    assert!(replayed >= 1);
}

#[test]
fn races_replay_in_the_simt_interpreter() {
    // The reference interpreter runs `T.Parallel` iterations one after
    // another, so a race is only observable after lowering to threads: the
    // SIMT interpreter reports it.
    let dir = root().join("core/tests/verify");
    let target = tilec_core::target::builtin("sm_80").expect("sm_80");
    let mut replayed = 0;
    for path in py_files(&dir) {
        let (text, module) = compile(&path);
        if !text.lines().any(|l| l.trim() == "# REPLAY: race") {
            continue;
        }
        let (obligations, outcomes) = verify_function(&module.functions[0]);
        let refuted =
            obligations.items.iter().zip(&outcomes).any(|(o, r)| {
                matches!(o.kind, ObligationKind::NoRace { .. }) && r.name() == "refuted"
            });
        assert!(refuted, "{}: no race refuted", path.display());
        let lowered = tilec_core::lower::to_thread(&module, &target)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let kernel = &lowered.kernels[0];
        let function = &module.functions[0];
        let shapes = interp::param_shapes(function, &SymbolValues::new()).expect("static shapes");
        let mut args: Vec<Tensor> = function
            .params
            .iter()
            .zip(shapes)
            .map(|(param, shape)| Tensor::zeros(function.buffers[param.buffer].dtype, shape))
            .collect();
        let result = tilec_core::simt::run(
            kernel,
            &target,
            &mut args,
            &tilec_core::simt::SimtOptions::default(),
        );
        match result {
            Err(e) if e.to_string().contains("race:") => {}
            other => panic!("{}: expected a race, got {other:?}", path.display()),
        }
        // The sequential reference interpreter sees nothing wrong.
        assert_eq!(run_with_symbols(function, SymbolValues::new()), Ok(()));
        replayed += 1;
    }
    assert!(replayed >= 1);
}

#[test]
fn safe_sizes_of_a_refuted_kernel_run_clean() {
    // dynamic_store_no_assume.py is refuted for N = 257; N = 256 is fine.
    let (_, module) = compile(&root().join("core/tests/verify/dynamic_store_no_assume.py"));
    let symbols: SymbolValues = [("N".to_string(), 256)].into_iter().collect();
    assert_eq!(run_with_symbols(&module.functions[0], symbols), Ok(()));
    let symbols: SymbolValues = [("N".to_string(), 257)].into_iter().collect();
    assert!(matches!(
        run_with_symbols(&module.functions[0], symbols),
        Err(InterpError::OutOfBounds { .. })
    ));
}

#[test]
fn shared_memory_refutation_matches_the_lowering() {
    let (_, module) = compile(&root().join("core/tests/verify/shared_over_limit.py"));
    let target = tilec_core::target::builtin("sm_80").expect("sm_80");
    let (obligations, outcomes) = verify_function(&module.functions[0]);
    let refuted = obligations.items.iter().zip(&outcomes).any(|(o, r)| {
        matches!(o.kind, ObligationKind::SharedMemory { .. }) && r.name() == "refuted"
    });
    assert!(refuted);
    assert!(
        tilec_core::lower::to_thread(&module, &target).is_err(),
        "the lowering accepted a kernel over the shared-memory limit"
    );
}

#[test]
fn every_example_and_good_kernel_is_proved() {
    let mut files = py_files(&root().join("examples"));
    files.extend(py_files(&root().join("core/tests/verify/good")));
    assert!(files.len() >= 10);
    for path in files {
        let (text, module) = compile(&path);
        for function in &module.functions {
            let (obligations, outcomes) = verify_function(function);
            assert!(!obligations.items.is_empty(), "{}", path.display());
            let open = verdicts(&text, &obligations, &outcomes);
            assert!(open.is_empty(), "{}:\n{open}", path.display());
        }
    }
}

#[test]
fn conformance_kernels_verify_with_only_advisory_refutations() {
    // The corpus exercises ragged tiles on purpose: regions of global
    // tensors may hang over the edge (the out-of-bounds rule), nothing else.
    let files = py_files(&root().join("conformance/corpus"));
    assert!(files.len() >= 10);
    for path in files {
        let (text, module) = compile(&path);
        for function in &module.functions {
            let (obligations, outcomes) = verify_function(function);
            for (o, r) in obligations.items.iter().zip(&outcomes) {
                assert!(
                    *r == Outcome::Proved || (!o.required && r.name() == "refuted"),
                    "{}:{}: {} {} is {r:?}",
                    path.display(),
                    line_of(&text, o),
                    o.kind.name(),
                    o.subject
                );
            }
        }
    }
}

#[test]
fn examples_verify_quickly() {
    for name in ["gemm.py", "flash_attention.py"] {
        let (_, module) = compile(&root().join("examples").join(name));
        let started = std::time::Instant::now();
        for function in &module.functions {
            verify_function(function);
        }
        let elapsed = started.elapsed();
        // The goal is 1 s in a release build; a debug build gets slack.
        assert!(elapsed.as_secs_f64() < 5.0, "{name}: {elapsed:?}");
    }
}

#[test]
fn obligations_are_data() {
    let (_, module) = compile(&root().join("core/tests/verify/parallel_off_by_one.py"));
    let obligations = verify::generate(&module.functions[0], &options()).expect("generate");
    let text = obligations.render();
    let load = obligations
        .items
        .iter()
        .find(|o| o.subject == "load S[i + 1, j]")
        .unwrap_or_else(|| panic!("no obligation for the load in:\n{text}"));
    assert_eq!(load.kind.name(), "in-bounds");
    assert!(load.required);
    assert!(!load.approximate);
    assert_eq!(
        load.goal.to_string(),
        "i + 1 >= 0 and i + 1 < 16 and j >= 0 and j < 32"
    );
    let hypotheses: Vec<String> = load.hypotheses.iter().map(ToString::to_string).collect();
    for h in ["bx >= 0", "bx < 4", "i >= 0", "i < 16", "j < 32"] {
        assert!(
            hypotheses.iter().any(|x| x == h),
            "{h} missing: {hypotheses:?}"
        );
    }
    // Without a solver the goal can be checked at a point: i = 15 breaks it.
    let env = |name: &str| match name {
        "i" => Some(15),
        "j" | "bx" => Some(0),
        _ => None,
    };
    assert_eq!(load.goal.eval(&env), Some(false));
    assert!(text.contains("in-bounds load S[i + 1, j]\n"));
    assert!(text.contains("shared-memory shared buffers S fit 166912 bytes\n"));
}

#[test]
fn term_arithmetic_matches_python_division() {
    let t = |a: i128, b: i128| (Box::new(Term::Const(a)), Box::new(Term::Const(b)));
    let none = |_: &str| None;
    let (a, b) = t(-7, 2);
    assert_eq!(Term::FloorDiv(a, b).eval(&none), Some(-4));
    let (a, b) = t(-7, 2);
    assert_eq!(Term::FloorMod(a, b).eval(&none), Some(1));
    let (a, b) = t(7, -2);
    assert_eq!(Term::FloorMod(a, b).eval(&none), Some(-1));
    let (a, b) = t(-7, 2);
    assert_eq!(Term::TruncDiv(a, b).eval(&none), Some(-3));
    let (a, b) = t(1, 0);
    assert_eq!(Term::FloorDiv(a, b).eval(&none), None);
    assert_eq!(
        Term::var("x").plus(Term::Const(0)).times(Term::Const(1)),
        Term::var("x")
    );
    assert_eq!(Term::Const(3).lt(Term::Const(4)), Formula::Bool(true));
}

#[test]
fn solver_division_agrees_with_the_interpreter() {
    // `(x // -3) * -3 + x % -3 == x` and the signs of `%` follow the
    // divisor: proved over all x in range, through Z3's Euclidean division.
    let src = r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((8,), "float32")
        for x in T.serial(-50, 50):
            S[(x // -3) * -3 + x % -3 - x + 3] = 1.0
            S[x % -3 + 2] = 2.0
            S[x % 5] = 3.0
"#;
    let out = py::compile(src, &py::Options::default());
    let module = out.module.expect("compiles");
    let (obligations, outcomes) = verify_function(&module.functions[0]);
    for (o, r) in obligations.items.iter().zip(&outcomes) {
        assert_eq!(r, &Outcome::Proved, "{}", o.render());
    }
    // And an off-by-one version is refuted with the boundary value.
    let bad = src.replace("S[x % 5]", "S[x % 9]");
    let module = py::compile(&bad, &py::Options::default())
        .module
        .expect("compiles");
    let (obligations, outcomes) = verify_function(&module.functions[0]);
    let refuted: Vec<&Obligation> = obligations
        .items
        .iter()
        .zip(&outcomes)
        .filter(|(_, r)| r.name() == "refuted")
        .map(|(o, _)| o)
        .collect();
    assert_eq!(refuted.len(), 1, "{refuted:?}");
    assert!(refuted[0].subject.contains("x % 9"));
}

#[test]
fn a_short_timeout_never_gives_a_wrong_verdict() {
    // Nonlinear index arithmetic under a 1 ms budget: proved or unknown,
    // never refuted (the accesses are in bounds).
    let src = r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((8,), "float32")
        for x in T.serial(1, 100):
            for y in T.serial(1, 100):
                for z in T.serial(1, 100):
                    S[(x * x * x + y * y * y - z * z * z) % 8 + (x * y * z * 7 + 13) % 1] = 1.0
"#;
    let module = py::compile(src, &py::Options::default())
        .module
        .expect("compiles");
    let mut options = options();
    options.timeout_ms = 1;
    let obligations = verify::generate(&module.functions[0], &options).expect("generate");
    let outcomes = verify::solve::discharge(&obligations, &options);
    for r in &outcomes {
        assert_ne!(r.name(), "refuted", "{outcomes:?}");
    }
}

#[test]
fn a_variable_divisor_must_be_non_zero() {
    let src = r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((8,), "float32")
        for d in T.serial(0, 4):
            S[7 // (d + 1)] = 1.0
            S[7 // d] = 2.0
"#;
    let module = py::compile(src, &py::Options::default())
        .module
        .expect("compiles");
    let (obligations, outcomes) = verify_function(&module.functions[0]);
    let refuted: Vec<(&Obligation, &Outcome)> = obligations
        .items
        .iter()
        .zip(&outcomes)
        .filter(|(_, r)| r.name() == "refuted")
        .collect();
    assert_eq!(refuted.len(), 1, "{refuted:?}");
    assert_eq!(refuted[0].0.subject, "index arithmetic of store S[7 // d]");
    let Outcome::Refuted(cx) = refuted[0].1 else {
        unreachable!()
    };
    assert_eq!(cx.value("d"), Some(0));
}

#[test]
fn deeply_nested_index_arithmetic_is_verified_without_overflowing_the_stack() {
    let depth = 600;
    let index = format!("{}i{} - {depth}", "(".repeat(depth), " + 1)".repeat(depth));
    let src = format!(
        r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((8,), "float32")
        for i in T.serial(8):
            S[{index}] = 1.0
"#
    );
    let out = py::compile(&src, &py::Options::default());
    let Some(module) = out.module else {
        // The front end may refuse such nesting; it must say why.
        assert!(out.diagnostics.iter().any(|d| d.is_error()));
        return;
    };
    let (obligations, outcomes) =
        verify::solve::verify_function(&module.functions[0], &options()).expect("verifies");
    for (o, r) in obligations.items.iter().zip(&outcomes) {
        assert_eq!(r, &Outcome::Proved, "{}", o.subject);
    }
}

/// Guards of the lowered code, one line each (`when` clauses of loads and
/// stores).
fn guarded_lines(
    module: &Module,
    proved: Vec<std::collections::HashSet<verify::AccessSite>>,
) -> Vec<String> {
    let target = tilec_core::target::builtin("sm_80").expect("sm_80 is built in");
    let options = tilec_core::lower::LowerOptions { proved };
    let lowered = tilec_core::lower::to_thread_with(module, &target, &options)
        .unwrap_or_else(|e| panic!("lowering: {e}"));
    tilec_core::thread::print_module(&lowered)
        .lines()
        .filter(|l| l.contains(" when "))
        .map(str::to_string)
        .collect()
}

/// Accesses proved in bounds lose their guards in the lowered code; a
/// refuted access keeps its guard.
#[test]
fn proved_accesses_are_lowered_without_guards() {
    let dir = root().join("core/tests/verify");
    let (_, good) = compile(&dir.join("good/dynamic_store_assumed.py"));
    let (obligations, outcomes) = verify_function(&good.functions[0]);
    let proved = verify::proved_sites(&obligations, &outcomes);
    assert_eq!(proved.len(), 4, "two loads and two stores: {proved:?}");
    assert_eq!(guarded_lines(&good, Vec::new()).len(), 4);
    let left = guarded_lines(&good, vec![proved]);
    assert!(left.is_empty(), "{left:?}");

    // Without the assumption, the accesses of `S` are refuted: they keep
    // their guards, while the proved accesses of `A` and `B` lose theirs.
    let (_, bad) = compile(&dir.join("dynamic_store_no_assume.py"));
    let (obligations, outcomes) = verify_function(&bad.functions[0]);
    let proved = verify::proved_sites(&obligations, &outcomes);
    let left = guarded_lines(&bad, vec![proved]);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|l| l.contains("%S[")), "{left:?}");
}
