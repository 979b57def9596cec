//! Tests of the pass infrastructure and of every registered pass.
//!
//! # File-based tests
//! Every `*.tirtest` file under `core/tests/passes/` (by convention in a
//! folder named after the pass it exercises) is a Tile IR module preceded
//! by directive comments:
//! - `# RUN: simplify` — the comma-separated passes to run (required);
//! - `# TARGET: sm_90a` — the built-in target description the passes read
//!   (none by default);
//! - `# CHECK: text` — the printed result contains `text`, after the
//!   previous CHECK's match; `# CHECK-NOT: text` — it does not contain
//!   `text` between the neighbouring CHECK matches;
//! - `# ERROR: text` — the pipeline fails with a message containing `text`
//!   (then there is no expected output).
//!
//! The input must parse and verify. The printed result must equal
//! `<name>.expected.tir` beside the input; `TILEC_BLESS=1` writes it
//! instead (review the diff). Running the same passes again on the result
//! must not change it. A pipeline that ends with the lowering step
//! (`lower-tile-ops`) prints thread IR, expected in `<name>.expected.thr`
//! (and is not run twice: its output is not Tile IR). (The inputs are not `.tir` files because the
//! round-trip test requires every `.tir` file to be canonical printed
//! text, which has no comments; the expected outputs are, and that test
//! checks them too.)
//!
//! # Other tests
//! The registry and the pipeline's hooks; a differential property test of
//! `simplify` through the reference interpreter on generated kernels; and
//! every example kernel, simplified, giving bit-identical results.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tilec_core::front::py;
use tilec_core::interp::{self, Tensor, TensorData};
use tilec_core::ir::verify::verify_module;
use tilec_core::ir::{DTypeKind, Function, Module};
use tilec_core::passes::{self, Pass, PassContext, PassError, Pipeline};
use tilec_core::text::{parse_module, print_module};

fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, ext, out);
        } else if path.to_string_lossy().ends_with(ext) {
            out.push(path);
        }
    }
}

fn directive<'s>(line: &'s str, key: &str) -> Option<&'s str> {
    line.trim_start()
        .strip_prefix('#')
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(key))
        .and_then(|rest| rest.strip_prefix(':'))
        .map(str::trim)
}

/// A line diff: `-` expected, `+` actual, by position.
fn diff(want: &str, got: &str) -> String {
    let mut out = String::new();
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    for i in 0..w.len().max(g.len()) {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => out.push_str(&format!(
                "line {}:\n  - {}\n  + {}\n",
                i + 1,
                a.unwrap_or(&""),
                b.unwrap_or(&"")
            )),
        }
    }
    out
}

fn check_lines(text: &str, checks: &[(bool, String)]) -> Result<(), String> {
    let mut pos = 0;
    let mut pending_not: Vec<&str> = Vec::new();
    for (positive, pattern) in checks {
        if !positive {
            pending_not.push(pattern);
            continue;
        }
        let Some(idx) = text[pos..].find(pattern.as_str()) else {
            return Err(format!("CHECK not found after offset {pos}: {pattern}"));
        };
        for n in pending_not.drain(..) {
            if text[pos..pos + idx].contains(n) {
                return Err(format!("CHECK-NOT matched: {n}"));
            }
        }
        pos += idx + pattern.len();
    }
    for n in pending_not {
        if text[pos..].contains(n) {
            return Err(format!("CHECK-NOT matched: {n}"));
        }
    }
    Ok(())
}

fn run_file(path: &Path, bless: bool) -> Result<(), String> {
    let source = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut run = None;
    let mut checks = Vec::new();
    let mut error = None;
    let mut cx = PassContext::default();
    for line in source.lines() {
        if let Some(list) = directive(line, "RUN") {
            run = Some(list.to_string());
        }
        if let Some(name) = directive(line, "TARGET") {
            cx.target = Some(
                tilec_core::target::builtin(name)
                    .map_err(|e| format!("`# TARGET: {name}`: {e}"))?,
            );
        }
        if let Some(c) = directive(line, "CHECK") {
            checks.push((true, c.to_string()));
        }
        if let Some(c) = directive(line, "CHECK-NOT") {
            checks.push((false, c.to_string()));
        }
        if let Some(e) = directive(line, "ERROR") {
            error = Some(e.to_string());
        }
    }
    let run = run.ok_or("no `# RUN:` line")?;
    let mut module = parse_module(&source).map_err(|e| format!("input does not parse: {e}"))?;
    if let Err(errors) = verify_module(&module) {
        return Err(format!("input does not verify: {errors:?}"));
    }
    let result = Pipeline::parse(&run)
        .map_err(|e| PipelineOrParse::Parse(e.to_string()))
        .and_then(|pipeline| {
            pipeline
                .run(&mut module, &cx)
                .map_err(|f| PipelineOrParse::Run(f.to_string()))?;
            pipeline
                .run_lowering(&module, &cx)
                .map(|lowered| lowered.map(|(m, _)| m))
                .map_err(|f| PipelineOrParse::Run(f.to_string()))
        });
    match (result, error) {
        (Ok(_), Some(e)) => return Err(format!("expected an error containing {e:?}")),
        (Err(PipelineOrParse::Parse(m) | PipelineOrParse::Run(m)), Some(e)) => {
            return if m.contains(&e) {
                Ok(())
            } else {
                Err(format!("expected an error containing {e:?}, got: {m}"))
            };
        }
        (Err(PipelineOrParse::Parse(m) | PipelineOrParse::Run(m)), None) => return Err(m),
        (Ok(Some(lowered)), None) => {
            let text = tilec_core::thread::print_module(&lowered);
            check_lines(&text, &checks).map_err(|e| format!("{e}\n--- thread IR ---\n{text}"))?;
            return compare_expected(path, "thr", &text, bless);
        }
        (Ok(None), None) => {}
    }
    let text = print_module(&module);
    check_lines(&text, &checks).map_err(|e| format!("{e}\n--- IR ---\n{text}"))?;
    // Idempotence: the same passes change nothing more.
    let mut again = module.clone();
    if let Ok(pipeline) = Pipeline::parse(&run) {
        pipeline
            .run(&mut again, &cx)
            .map_err(|f| format!("second run failed: {f}"))?;
        let twice = print_module(&again);
        if twice != text {
            return Err(format!(
                "a second run changes the result:\n{}",
                diff(&text, &twice)
            ));
        }
    }
    compare_expected(path, "tir", &text, bless)
}

/// `text` against `<name>.expected.<ext>` beside the test `path`, or
/// written there with `bless`.
fn compare_expected(path: &Path, ext: &str, text: &str, bless: bool) -> Result<(), String> {
    let name = path
        .to_string_lossy()
        .trim_end_matches(".tirtest")
        .to_string();
    let expected = PathBuf::from(format!("{name}.expected.{ext}"));
    if bless {
        std::fs::write(&expected, text).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let want = std::fs::read_to_string(&expected)
        .map_err(|_| format!("missing {} (run with TILEC_BLESS=1)", expected.display()))?;
    if want != text {
        return Err(format!(
            "result differs from {} (- expected, + actual):\n{}",
            expected.display(),
            diff(&want, text)
        ));
    }
    Ok(())
}

enum PipelineOrParse {
    Parse(String),
    Run(String),
}

#[test]
fn pass_file_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/passes");
    let mut files = Vec::new();
    collect(&root, ".tirtest", &mut files);
    let bless = std::env::var_os("TILEC_BLESS").is_some_and(|v| v == "1");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            run_file(f, bless)
                .err()
                .map(|e| format!("{}:\n{e}", f.display()))
        })
        .collect();
    let simplify = files
        .iter()
        .filter(|f| f.parent().is_some_and(|p| p.ends_with("simplify")))
        .count();
    assert!(
        simplify >= 15,
        "expected at least 15 simplify tests, found {simplify}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} pass tests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// Every `.expected.tir` and `.expected.thr` has its input beside it.
#[test]
fn no_orphan_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/passes");
    for ext in [".expected.tir", ".expected.thr"] {
        let mut files = Vec::new();
        collect(&root, ext, &mut files);
        for f in files {
            let input = f.to_string_lossy().replace(ext, ".tirtest");
            assert!(Path::new(&input).exists(), "{} has no input", f.display());
        }
    }
}

// ---- Registry and pipeline ---------------------------------------------------

#[test]
fn registry_names_are_unique_kebab_case_and_described() {
    let names = passes::names();
    assert!(names.contains(&"simplify"));
    let mut seen = std::collections::BTreeSet::new();
    for pass in passes::all() {
        let name = pass.name();
        assert!(seen.insert(name), "`{name}` is registered twice");
        assert!(
            !name.is_empty()
                && name.split('-').all(|w| !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())),
            "`{name}` is not kebab-case"
        );
        assert!(
            pass.description().len() > 40,
            "`{name}` needs a description"
        );
        assert!(passes::lookup(name).is_some_and(|p| p.name() == name));
    }
    for lowering in passes::lowerings() {
        let name = lowering.name();
        assert!(seen.insert(name), "`{name}` is registered twice");
        assert!(
            lowering.description().len() > 40,
            "`{name}` needs a description"
        );
        assert!(passes::lookup_lowering(name).is_some_and(|l| l.name() == name));
        assert!(passes::lookup(name).is_none() && passes::is_registered(name));
    }
    assert_eq!(
        names.len(),
        seen.len(),
        "`names()` lists every pass and lowering once"
    );
    assert_eq!(names.last(), Some(&"lower-tile-ops"));
    assert!(passes::lookup("no-such-pass").is_none());
}

#[test]
fn the_lowering_step_ends_a_pipeline() {
    let pipeline = Pipeline::parse("simplify,lower-tile-ops").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pipeline.pass_names(), ["simplify", "lower-tile-ops"]);
    assert_eq!(pipeline.passes().len(), 1);
    assert!(pipeline.lowering().is_some() && pipeline.contains("lower-tile-ops"));
    let err = Pipeline::parse("lower-tile-ops,simplify").err();
    assert!(
        matches!(&err, Some(PassError::AfterLowering { name, lowering: "lower-tile-ops" }) if name == "simplify"),
        "{err:?}"
    );
    // An unknown name after the lowering is reported as unknown.
    let err = Pipeline::parse("lower-tile-ops,bogus").err();
    assert!(
        matches!(err, Some(PassError::UnknownPass { .. })),
        "{err:?}"
    );
    // Without a lowering step there is nothing to lower.
    let module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let simplify = Pipeline::parse("simplify").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        simplify.run_lowering(&module, &PassContext::default()),
        Ok(None)
    ));
}

#[test]
fn the_lowering_step_prints_thread_ir_and_is_timed() {
    let mut module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let mut pipeline = Pipeline::parse("simplify,lower-tile-ops").unwrap_or_else(|e| panic!("{e}"));
    pipeline
        .print_before("lower-tile-ops")
        .unwrap_or_else(|e| panic!("{e}"));
    pipeline
        .print_after("lower-tile-ops")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cx = PassContext::default();
    // No target: refused, naming the missing flag.
    let refused = pipeline
        .run_lowering(&module, &cx)
        .err()
        .map(|f| f.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|m| m.contains("none was given (pass `--target`)")),
        "{refused:?}"
    );
    cx.target = Some(tilec_core::target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}")));
    pipeline
        .run(&mut module, &cx)
        .unwrap_or_else(|f| panic!("{f}"));
    let (lowered, report) = pipeline
        .run_lowering(&module, &cx)
        .unwrap_or_else(|f| panic!("{f}"))
        .unwrap_or_else(|| panic!("the pipeline has a lowering step"));
    let expected = tilec_core::lower::to_thread(
        &module,
        cx.target.as_ref().unwrap_or_else(|| unreachable!()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lowered, expected);
    let labels: Vec<&str> = report.printed.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["before lower-tile-ops", "after lower-tile-ops"]);
    assert_eq!(report.printed[0].1, print_module(&module));
    assert_eq!(
        report.printed[1].1,
        tilec_core::thread::print_module(&lowered)
    );
    assert_eq!(report.timings.len(), 1);
    assert_eq!(report.timings[0].pass, "lower-tile-ops");
}

#[test]
fn unknown_pass_names_list_the_registered_ones() {
    let err = Pipeline::parse("simplify, no-such-pass").err();
    let Some(PassError::UnknownPass { name, known }) = err else {
        panic!("expected UnknownPass, got {err:?}");
    };
    assert_eq!(name, "no-such-pass");
    assert_eq!(known, passes::names());
    let message = Pipeline::parse("bogus").err().map(|e| e.to_string());
    assert_eq!(
        message.as_deref(),
        Some(
            "unknown pass `bogus`; the registered passes are: simplify, infer-layouts, inject-pipeline, warp-specialize, plan-shared-memory, lower-tile-ops"
        )
    );
    let mut pipeline = Pipeline::new();
    assert!(pipeline.print_after("bogus").is_err());
    assert!(Pipeline::parse(" , ").is_ok_and(|p| p.passes().is_empty()));
}

const SMALL: &str = "\
tile_ir 0.1

func @f(%A: global i32[8]) {
  kernel grid(1) threads(32) block(%bx) thread(%tx) {
    parallel (%i < 8) {
      %A[%i * 4 // 4 + 0] = %i + 1 - 1
    }
  }
}
";

#[test]
fn pipeline_prints_where_asked_and_times_every_pass() {
    let mut module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let mut pipeline = Pipeline::parse("simplify,simplify").unwrap_or_else(|e| panic!("{e}"));
    pipeline
        .print_before("simplify")
        .unwrap_or_else(|e| panic!("{e}"));
    pipeline
        .print_after("simplify")
        .unwrap_or_else(|e| panic!("{e}"));
    let report = pipeline
        .run(&mut module, &PassContext::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let labels: Vec<&str> = report.printed.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "before simplify",
            "after simplify",
            "before simplify #2",
            "after simplify #2"
        ]
    );
    assert_eq!(report.printed[0].1, SMALL);
    assert!(
        report.printed[1].1.contains("%A[%i] = %i"),
        "{}",
        report.printed[1].1
    );
    assert_eq!(report.printed[1].1, report.printed[3].1);
    assert_eq!(
        report.timings.iter().map(|t| t.pass).collect::<Vec<_>>(),
        ["simplify", "simplify"]
    );
}

/// A deliberately broken pass: it points a store at an expression that
/// does not exist.
struct Breaks;

impl Pass for Breaks {
    fn name(&self) -> &'static str {
        "breaks"
    }
    fn description(&self) -> &'static str {
        "test pass"
    }
    fn run(&self, module: &mut Module, _cx: &PassContext) -> Result<(), PassError> {
        for f in &mut module.functions {
            f.expr_types.pop();
        }
        Ok(())
    }
}

struct Refuses;

impl Pass for Refuses {
    fn name(&self) -> &'static str {
        "refuses"
    }
    fn description(&self) -> &'static str {
        "test pass"
    }
    fn run(&self, _module: &mut Module, _cx: &PassContext) -> Result<(), PassError> {
        Err(PassError::Failed {
            pass: "refuses",
            function: "f".into(),
            source: "no reason".into(),
        })
    }
}

#[test]
fn a_module_broken_by_a_pass_is_reported_against_that_pass() {
    let mut module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let mut pipeline = Pipeline::parse("simplify").unwrap_or_else(|e| panic!("{e}"));
    pipeline.push(&Breaks);
    pipeline
        .print_before("simplify")
        .unwrap_or_else(|e| panic!("{e}"));
    let failure = pipeline
        .run(&mut module, &PassContext::default())
        .err()
        .unwrap_or_else(|| panic!("the broken pass went unnoticed"));
    assert!(
        matches!(failure.error, PassError::Verify { pass: "breaks", .. }),
        "{:?}",
        failure.error
    );
    let message = failure.to_string();
    assert!(
        message.starts_with(
            "internal compiler error: the IR does not verify after pass `breaks`: @f: "
        ),
        "{message}"
    );
    // What was collected before the failure comes back.
    assert_eq!(failure.report.printed.len(), 1);
    assert_eq!(failure.report.timings.len(), 2);

    // A broken input is not blamed on the first pass.
    let mut broken = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    broken.functions[0].expr_types.pop();
    let failure = pipeline
        .run(&mut broken, &PassContext::default())
        .err()
        .map(|f| f.error);
    assert!(
        matches!(failure, Some(PassError::InvalidInput { .. })),
        "{failure:?}"
    );

    // A pass's own error comes back as it is.
    let mut module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let mut pipeline = Pipeline::new();
    pipeline.push(&Refuses);
    let failure = pipeline.run(&mut module, &PassContext::default()).err();
    assert_eq!(
        failure.map(|f| f.to_string()).as_deref(),
        Some("pass `refuses` failed on function `@f`: no reason")
    );
}

#[test]
fn compaction_drops_unreachable_expressions() {
    let mut module = parse_module(SMALL).unwrap_or_else(|e| panic!("{e}"));
    let before = module.functions[0].exprs.len();
    Pipeline::parse("simplify")
        .and_then(|p| {
            p.run(&mut module, &PassContext::default())
                .map_err(|f| f.error)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let f = &module.functions[0];
    assert!(f.exprs.len() < before, "{} >= {before}", f.exprs.len());
    assert_eq!(f.exprs.len(), f.expr_types.len());
    // Every expression left is reachable: printing and re-parsing gives
    // the same count.
    let reparsed = parse_module(&print_module(&module)).unwrap_or_else(|e| panic!("{e}"));
    assert!(reparsed.functions[0].exprs.len() >= f.exprs.len());
}

/// Every module of the test corpus that verifies still verifies after
/// `simplify` (the pipeline checks), and simplifying again changes nothing.
#[test]
fn simplify_keeps_every_corpus_module_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    collect(&root, ".tir", &mut files);
    let mut count = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Ok(module) = parse_module(&text) else {
            continue;
        };
        if verify_module(&module).is_err() {
            continue;
        }
        count += 1;
        let once = simplified(&module);
        let twice = simplified(&once);
        assert!(
            print_module(&once) == print_module(&twice),
            "{}: a second simplify changes the result",
            path.display()
        );
    }
    assert!(count >= 50, "only {count} corpus modules");
}

/// Long sums are flattened; sums nested beyond the IR's depth limit
/// (`ir::MAX_EXPR_DEPTH`) are refused by the reader, so no pass sees them.
#[test]
fn long_and_deep_expressions() {
    let run = || {
        let text = |terms: usize| {
            let sum = vec!["%i"; terms].join(" + ");
            format!(
                "tile_ir 0.1\n\nfunc @f(%A: global i32[8]) {{\n  kernel grid(1) threads(1) block(%b) thread(%t) {{\n    for %i in serial(0, 8) {{\n      %A[{sum}] = 1\n    }}\n  }}\n}}\n"
            )
        };
        let module = parse_module(&text(120)).unwrap_or_else(|e| panic!("{e}"));
        let printed = print_module(&simplified(&module));
        assert!(printed.contains("%A[%i * 120] = 1"), "{printed}");
        assert!(parse_module(&text(3000)).is_err());
    };
    let worker = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(run)
        .unwrap_or_else(|e| panic!("{e}"));
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

// ---- Differential testing through the interpreter ---------------------------

/// A random integer expression over the variables `%x`, `%y`, `%b` (block
/// index) and `%z` (a `let`), printed fully parenthesized.
#[derive(Clone, Debug)]
enum Gen {
    Const(i64),
    Var(usize),
    Bin(&'static str, Box<Gen>, Box<Gen>),
    Neg(Box<Gen>),
    Select(&'static str, Box<Gen>, Box<Gen>, Box<Gen>, Box<Gen>),
    MinMax(&'static str, Box<Gen>, Box<Gen>),
}

const VARS: [&str; 4] = ["%x", "%y", "%b", "%z"];

fn literal(ty: &str, v: i64) -> String {
    if ty == "i32" {
        if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }
    } else {
        format!("{ty}({v})")
    }
}

fn show(g: &Gen, ty: &str) -> String {
    match g {
        Gen::Const(v) => literal(ty, *v),
        Gen::Var(i) => VARS[*i].to_string(),
        Gen::Bin(op, a, b) => format!("({} {op} {})", show(a, ty), show(b, ty)),
        Gen::Neg(a) => format!("(-{})", show(a, ty)),
        Gen::Select(cmp, l, r, a, b) => format!(
            "select({} {cmp} {}, {}, {})",
            show(l, ty),
            show(r, ty),
            show(a, ty),
            show(b, ty)
        ),
        Gen::MinMax(f, a, b) => format!("{f}({}, {})", show(a, ty), show(b, ty)),
    }
}

fn gen_expr() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        3 => (0usize..4).prop_map(Gen::Var),
        1 => (-9i64..10).prop_map(Gen::Const),
        1 => prop::sample::select(vec![1i64, 2, 3, 4, 8, 16, 32, 64, 100, 127, 128, 1 << 20]).prop_map(Gen::Const),
    ];
    leaf.prop_recursive(5, 40, 3, |inner| {
        let divisor = prop_oneof![
            3 => prop::sample::select(vec![1i64, 2, 3, 4, 5, 8, 16, 32, 64]).prop_map(Gen::Const),
            1 => prop::sample::select(vec![-1i64, -2, -4, -3]).prop_map(Gen::Const),
            1 => inner.clone(),
        ];
        prop_oneof![
            4 => (prop::sample::select(vec!["+", "-", "*"]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Gen::Bin(op, Box::new(a), Box::new(b))),
            4 => (prop::sample::select(vec!["//", "%", "/"]), inner.clone(), divisor)
                .prop_map(|(op, a, b)| Gen::Bin(op, Box::new(a), Box::new(b))),
            1 => inner.clone().prop_map(|a| Gen::Neg(Box::new(a))),
            1 => (prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), inner.clone(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, l, r, a, b)| Gen::Select(c, Box::new(l), Box::new(r), Box::new(a), Box::new(b))),
            1 => (prop::sample::select(vec!["min", "max"]), inner.clone(), inner)
                .prop_map(|(f, a, b)| Gen::MinMax(f, Box::new(a), Box::new(b))),
        ]
    })
}

/// A kernel storing `expr` for every `%x` in `x0 .. x0 + nx`, `%y` in
/// `y0 .. y0 + ny` and block `%b` in `0 .. nb`, with `%z = x * 3 - y`,
/// in both branches of `if fact` (so that facts from the condition are
/// used), and the value of `guard`.
fn kernel_text(
    ty: &str,
    expr: &str,
    guard: &str,
    fact: &str,
    (x0, nx, y0, ny, nb): (i64, i64, i64, i64, i64),
) -> String {
    let n = nx * ny * nb;
    let binder = |name: &str| {
        if ty == "i32" {
            name.to_string()
        } else {
            format!("{name}: {ty}")
        }
    };
    let cell = format!(
        "(%b * {} + (%x - {}) * {} + (%y - {}))",
        literal(ty, nx * ny),
        literal(ty, x0),
        literal(ty, ny),
        literal(ty, y0)
    );
    format!(
        "tile_ir 0.1\n\nfunc @k(%Out: global {ty}[{n}], %Ok: global bool[{n}]) {{\n  kernel grid({nb}) threads(1) block({}) thread(%t) {{\n    for {} in serial({}, {}) {{\n      for {} in serial({}, {}) {{\n        let %z: {ty} = %x * {} - %y\n        if {fact} {{\n          %Out[cast<i32>({cell})] = {expr}\n        }} else {{\n          %Out[cast<i32>({cell})] = {expr}\n        }}\n        %Ok[cast<i32>({cell})] = {guard}\n      }}\n    }}\n  }}\n}}\n",
        binder("%b"),
        binder("%x"),
        literal(ty, x0),
        literal(ty, nx),
        binder("%y"),
        literal(ty, y0),
        literal(ty, ny),
        literal(ty, 3),
    )
}

/// Runs the function on zeroed outputs; `None` when the run fails.
fn run_kernel(f: &Function) -> Option<Vec<Vec<i64>>> {
    let shapes = interp::param_shapes(f, &BTreeMap::new()).ok()?;
    let mut args: Vec<Tensor> = f
        .params
        .iter()
        .zip(shapes)
        .map(|(p, shape)| Tensor::zeros(f.buffers[p.buffer].dtype, shape))
        .collect();
    interp::run(f, &mut args).ok()?;
    Some(
        args.into_iter()
            .map(|t| match t.data {
                TensorData::Int(v) => v,
                TensorData::Float(v) => v.iter().map(|x| x.to_bits() as i64).collect(),
            })
            .collect(),
    )
}

fn simplified(module: &Module) -> Module {
    let mut out = module.clone();
    if let Err(f) = Pipeline::parse("simplify").and_then(|p| {
        p.run(&mut out, &PassContext::default())
            .map_err(|f| f.error)
    }) {
        panic!("simplify failed: {f}\n{}", print_module(module));
    }
    out
}

/// A comparison of a variable with a constant: `(variable, operator,
/// constant)`.
type Fact = (usize, &'static str, i64);

fn differential(
    ty: &str,
    expr: &Gen,
    guard: (&'static str, &Gen, &Gen),
    fact: Fact,
    bounds: (i64, i64, i64, i64, i64),
) -> Result<(), TestCaseError> {
    let e = show(expr, ty);
    let g = format!("{} {} {}", show(guard.1, ty), guard.0, show(guard.2, ty));
    let f = format!("{} {} {}", VARS[fact.0], fact.1, literal(ty, fact.2));
    let text = kernel_text(ty, &e, &g, &f, bounds);
    let module = match parse_module(&text) {
        Ok(m) => m,
        Err(err) => return Err(TestCaseError::fail(format!("{err}\n{text}"))),
    };
    prop_assert_eq!(verify_module(&module), Ok(()));
    // A run that fails (division by zero) has nothing to compare.
    let Some(want) = run_kernel(&module.functions[0]) else {
        return Ok(());
    };
    let after = simplified(&module);
    let got = run_kernel(&after.functions[0]);
    prop_assert_eq!(
        Some(&want),
        got.as_ref(),
        "\n--- before ---\n{}--- after ---\n{}",
        text,
        print_module(&after)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn simplify_preserves_integer_values(
        expr in gen_expr(),
        guard in (prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), gen_expr(), gen_expr()),
        x0 in -6i64..6, nx in 1i64..5, y0 in -6i64..6, ny in 1i64..5, nb in 1i64..3,
        fact in (0usize..4, prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), -8i64..8),
    ) {
        differential("i32", &expr, (guard.0, &guard.1, &guard.2), fact, (x0, nx, y0, ny, nb))?;
    }

    /// In `i8`, intermediate values wrap often: rules that need the
    /// absence of wrapping must notice.
    #[test]
    fn simplify_preserves_wrapping_values(
        expr in gen_expr(),
        guard in (prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), gen_expr(), gen_expr()),
        x0 in -60i64..60, nx in 1i64..5, y0 in -60i64..60, ny in 1i64..5, nb in 1i64..3,
        ty in prop::sample::select(vec!["i8", "i16", "i64", "u8", "u32", "u64"]),
        fact in (0usize..4, prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), -60i64..60),
    ) {
        let unsigned = ty.starts_with('u');
        let (x0, y0) = if unsigned { (x0.abs(), y0.abs()) } else { (x0, y0) };
        let fix = |g: &Gen| if unsigned { unsign(g) } else { clamp(g) };
        let fact = if unsigned { (fact.0, fact.1, fact.2.abs()) } else { fact };
        differential(ty, &fix(&expr), (guard.0, &fix(&guard.1), &fix(&guard.2)), fact, (x0, nx, y0, ny, nb))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Facts from `if` conditions decide comparisons of the same variables
    /// in its branches, exactly at the boundaries.
    #[test]
    fn facts_from_conditions_decide_exactly(
        fact in (0usize..2, prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), -5i64..5),
        probe in (0usize..2, prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]), -5i64..5),
        x0 in -6i64..2, nx in 1i64..8, y0 in -6i64..2, ny in 1i64..8,
    ) {
        let expr = Gen::Select(
            probe.1,
            Box::new(Gen::Var(probe.0)),
            Box::new(Gen::Const(probe.2)),
            Box::new(Gen::Const(1)),
            Box::new(Gen::Const(0)),
        );
        let guard = (probe.1, &Gen::Var(probe.0), &Gen::Const(probe.2 + 1));
        differential("i32", &expr, guard, fact, (x0, nx, y0, ny, 1))?;
    }
}

/// Keeps constants within `i8`.
fn clamp(g: &Gen) -> Gen {
    map_consts(g, &|v| v.clamp(-128, 127))
}

/// Non-negative constants within `u8`.
fn unsign(g: &Gen) -> Gen {
    map_consts(g, &|v| v.abs().min(255))
}

fn map_consts(g: &Gen, f: &dyn Fn(i64) -> i64) -> Gen {
    let m = |g: &Gen| Box::new(map_consts(g, f));
    match g {
        Gen::Const(v) => Gen::Const(f(*v)),
        Gen::Var(i) => Gen::Var(*i),
        Gen::Bin(op, a, b) => Gen::Bin(op, m(a), m(b)),
        Gen::Neg(a) => Gen::Neg(m(a)),
        Gen::Select(c, l, r, a, b) => Gen::Select(c, m(l), m(r), m(a), m(b)),
        Gen::MinMax(op, a, b) => Gen::MinMax(op, m(a), m(b)),
    }
}

// ---- The examples -------------------------------------------------------------

/// SplitMix64, for seeded inputs.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn inputs(f: &Function, seed: u64) -> Vec<Tensor> {
    let shapes = interp::param_shapes(f, &BTreeMap::new())
        .unwrap_or_else(|e| panic!("{}: parameter shapes: {e}", f.name));
    let mut rng = SplitMix64(seed);
    f.params
        .iter()
        .zip(shapes)
        .map(|(param, shape)| {
            let dtype = f.buffers[param.buffer].dtype;
            let len: usize = shape.iter().product();
            let data = match dtype.kind() {
                DTypeKind::Float => TensorData::Float(
                    (0..len)
                        .map(|_| {
                            dtype.round_f64(
                                (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0,
                            )
                        })
                        .collect(),
                ),
                DTypeKind::Signed => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 17) as i64 - 8).collect())
                }
                DTypeKind::Unsigned | DTypeKind::Bool => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 2) as i64).collect())
                }
            };
            Tensor { dtype, shape, data }
        })
        .collect()
}

fn bits(tensors: &[Tensor]) -> Vec<Vec<u64>> {
    tensors
        .iter()
        .map(|t| match &t.data {
            TensorData::Float(v) => v.iter().map(|x| x.to_bits()).collect(),
            TensorData::Int(v) => v.iter().map(|&x| x as u64).collect(),
        })
        .collect()
}

/// Every example kernel, compiled with its defaults and simplified, gives
/// bit-identical results in the reference interpreter.
#[test]
fn simplified_examples_give_identical_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = Vec::new();
    collect(&root, ".py", &mut files);
    assert!(files.len() >= 5, "examples went missing");
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        let out = py::compile(&source, &py::Options::default());
        let Some(module) = out.module else {
            panic!("{}: {:?}", file.display(), out.diagnostics);
        };
        let after = simplified(&module);
        for (before, after) in module.functions.iter().zip(&after.functions) {
            let mut want = inputs(before, 7);
            let mut got = want.clone();
            interp::run(before, &mut want).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            interp::run(after, &mut got).unwrap_or_else(|e| {
                panic!(
                    "{}: the simplified kernel fails: {e}\n{}",
                    file.display(),
                    print_module(&after_module(after))
                )
            });
            assert!(
                bits(&want) == bits(&got),
                "{}: results differ after simplify",
                file.display()
            );
        }
    }
}

fn after_module(f: &Function) -> Module {
    Module {
        functions: vec![f.clone()],
    }
}
