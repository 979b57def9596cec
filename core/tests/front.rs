//! File-based tests of the TileLang front end.
//!
//! Every `*.py` file under `core/tests/front/` is compiled. Directives are
//! comments in the file:
//! - `# KERNEL: matmul(257, 129, 77)` — the `--kernel` expression;
//! - `# DEFINE: NAME=VALUE` — a `-D` binding (may repeat);
//! - `# TARGET: sm_90a` — the target whose facts answer build-time device
//!   queries (default: none, and such queries are errors);
//! - `# CHECK: text` — the printed IR contains `text`, after the previous
//!   CHECK's match (in order); `# CHECK-NOT: text` — it does not contain it
//!   between the neighbouring CHECK matches;
//! - `# ERROR: T0302` written at the end of a line — an error with that code
//!   whose primary location is on that line; `# ERROR-ANYWHERE: T0200` — an
//!   error with that code at any (or no) location; `# WARNING: W0001` — a
//!   warning on that line;
//! - `# RUN` — the compiled kernel is also run by the reference interpreter
//!   on fixed inputs (parameter `p`'s element `i` is `((i + 3p) * 5 % 7) / 2`
//!   cast to its dtype), and must run without error;
//!   `# RUN-SYMBOL: n=64` binds a symbolic size for that run (may repeat);
//!   `# RUN-EQUAL: B = A` — after the run, the elements of parameters `B`
//!   and `A` are equal (may repeat; implies `# RUN`).
//!
//! Files and folders whose names start with `_` are not tests: they are
//! helper modules the tests import (`import _quant_helpers`).
//!
//! Every diagnostic must be expected. A file without ERROR directives must
//! compile, and its printed IR must equal the snapshot `<name>.tir` beside
//! it. Run with `TILEC_BLESS=1` to write the snapshots instead.

use std::path::{Path, PathBuf};
use tilec_core::front::{self, Severity, line_col, py};
use tilec_core::interp;

fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Names starting with `_` are helper modules the tests import, not
        // tests.
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('_'))
        {
            continue;
        }
        if p.is_dir() {
            collect(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct Expected {
    severity: &'static str,
    code: String,
    line: Option<usize>,
}

fn directive<'s>(line: &'s str, key: &str) -> Option<&'s str> {
    let idx = line.find(&format!("# {key}:"))?;
    Some(line[idx + key.len() + 3..].trim())
}

fn run_file(path: &Path, bless: bool) -> Result<(), String> {
    let source = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut options = py::Options::default();
    let mut checks: Vec<(bool, String)> = Vec::new();
    let mut expected = Vec::new();
    let mut run = RunSpec::default();
    for (i, line) in source.lines().enumerate() {
        let lineno = i + 1;
        run.read(line)?;
        if let Some(k) = directive(line, "KERNEL") {
            options.kernel = Some(k.to_string());
        }
        if let Some(d) = directive(line, "DEFINE") {
            let (n, v) = d.split_once('=').ok_or("DEFINE needs NAME=VALUE")?;
            options
                .defines
                .insert(n.trim().to_string(), v.trim().to_string());
        }
        if let Some(t) = directive(line, "TARGET") {
            options.target = Some(py::TargetFacts::for_target(t));
        }
        if let Some(c) = directive(line, "CHECK") {
            checks.push((true, c.to_string()));
        }
        if let Some(c) = directive(line, "CHECK-NOT") {
            checks.push((false, c.to_string()));
        }
        if let Some(code) = directive(line, "ERROR") {
            expected.push(Expected {
                severity: "error",
                code: code.to_string(),
                line: Some(lineno),
            });
        }
        if let Some(code) = directive(line, "ERROR-ANYWHERE") {
            expected.push(Expected {
                severity: "error",
                code: code.to_string(),
                line: None,
            });
        }
        if let Some(code) = directive(line, "WARNING-ANYWHERE") {
            expected.push(Expected {
                severity: "warning",
                code: code.to_string(),
                line: None,
            });
        }
        if let Some(code) = directive(line, "WARNING") {
            expected.push(Expected {
                severity: "warning",
                code: code.to_string(),
                line: Some(lineno),
            });
        }
    }
    let out = py::compile_file(&source, Some(path), &options);
    let mut found: Vec<(Expected, String)> = out
        .diagnostics
        .iter()
        .map(|d| {
            let line =
                (!d.primary.span.is_unknown()).then(|| line_col(&source, d.primary.span.start).0);
            let sev = if d.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            (
                Expected {
                    severity: sev,
                    code: d.code.to_string(),
                    line,
                },
                d.message.clone(),
            )
        })
        .collect();
    let mut problems = Vec::new();
    for e in &expected {
        let pos = found.iter().position(|(f, _)| {
            f.severity == e.severity && f.code == e.code && (e.line.is_none() || f.line == e.line)
        });
        match pos {
            Some(p) => {
                found.remove(p);
            }
            None => problems.push(format!(
                "missing {} {} at line {:?}",
                e.severity, e.code, e.line
            )),
        }
    }
    for (f, msg) in &found {
        problems.push(format!(
            "unexpected {} {} at line {:?}: {msg}",
            f.severity, f.code, f.line
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let has_error = expected.iter().any(|e| e.severity == "error");
    if has_error {
        if out.module.is_some() {
            return Err("errors were reported but a module was still produced".into());
        }
        return Ok(());
    }
    let module = out
        .module
        .ok_or("no module produced and no error expected")?;
    let text = tilec_core::text::print_module(&module);
    // CHECK lines, in order.
    let mut pos = 0;
    let mut pending_not: Vec<String> = Vec::new();
    for (positive, pat) in &checks {
        if *positive {
            let Some(idx) = text[pos..].find(pat.as_str()) else {
                return Err(format!(
                    "CHECK not found after offset {pos}: {pat}\n--- IR ---\n{text}"
                ));
            };
            for n in pending_not.drain(..) {
                if text[pos..pos + idx].contains(&n) {
                    return Err(format!("CHECK-NOT matched: {n}\n--- IR ---\n{text}"));
                }
            }
            pos += idx + pat.len();
        } else {
            pending_not.push(pat.clone());
        }
    }
    for n in pending_not {
        if text[pos..].contains(&n) {
            return Err(format!("CHECK-NOT matched: {n}\n--- IR ---\n{text}"));
        }
    }
    if run.wanted {
        run.check(&module)?;
    }
    let snapshot = path.with_extension("tir");
    if bless {
        std::fs::write(&snapshot, &text).map_err(|e| e.to_string())?;
    } else {
        let want = std::fs::read_to_string(&snapshot).map_err(|_| {
            format!(
                "missing snapshot {} (run with TILEC_BLESS=1)",
                snapshot.display()
            )
        })?;
        if want != text {
            return Err(format!(
                "printed IR differs from {}:\n{}",
                snapshot.display(),
                diff(&want, &text)
            ));
        }
    }
    Ok(())
}

/// What the `# RUN` directives ask of a file.
#[derive(Default)]
struct RunSpec {
    wanted: bool,
    symbols: interp::SymbolValues,
    equal: Vec<(String, String)>,
}

impl RunSpec {
    fn read(&mut self, line: &str) -> Result<(), String> {
        if line.trim_end().ends_with("# RUN") {
            self.wanted = true;
        }
        if let Some(d) = directive(line, "RUN-SYMBOL") {
            let (n, v) = d.split_once('=').ok_or("RUN-SYMBOL needs NAME=VALUE")?;
            let v: i64 = v
                .trim()
                .parse()
                .map_err(|e| format!("RUN-SYMBOL {d}: {e}"))?;
            self.symbols.insert(n.trim().to_string(), v);
            self.wanted = true;
        }
        if let Some(d) = directive(line, "RUN-EQUAL") {
            let (a, b) = d.split_once('=').ok_or("RUN-EQUAL needs `B = A`")?;
            self.equal
                .push((a.trim().to_string(), b.trim().to_string()));
            self.wanted = true;
        }
        Ok(())
    }

    /// Runs every function of `module` on the fixed inputs and checks the
    /// equalities asked for.
    fn check(&self, module: &tilec_core::ir::Module) -> Result<(), String> {
        for func in &module.functions {
            let shapes = interp::param_shapes(func, &self.symbols)
                .map_err(|e| format!("`{}`: parameter shapes: {e}", func.name))?;
            let mut args = Vec::new();
            for (p, (param, shape)) in func.params.iter().zip(&shapes).enumerate() {
                let dtype = func.buffers[param.buffer].dtype;
                let n: usize = shape.iter().product();
                let values = (0..n).map(|i| ((i + 3 * p) * 5 % 7) as f64 / 2.0).collect();
                args.push(
                    interp::Tensor::from_f64(dtype, shape.clone(), values)
                        .map_err(|e| e.to_string())?,
                );
            }
            let options = interp::RunOptions {
                symbols: self.symbols.clone(),
                ..interp::RunOptions::default()
            };
            interp::run_with(func, &mut args, &options)
                .map_err(|e| format!("`{}`: the reference interpreter failed: {e}", func.name))?;
            let by_name = |name: &str| {
                func.params
                    .iter()
                    .position(|p| func.buffers[p.buffer].name == name)
                    .map(|i| args[i].to_f64_vec())
                    .ok_or_else(|| format!("RUN-EQUAL: `{}` has no parameter `{name}`", func.name))
            };
            for (a, b) in &self.equal {
                let (x, y) = (by_name(a)?, by_name(b)?);
                if x != y {
                    let first = x.iter().zip(&y).position(|(u, v)| u != v);
                    return Err(format!(
                        "RUN-EQUAL: `{a}` differs from `{b}` (lengths {} and {}; first difference at element {first:?})",
                        x.len(),
                        y.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

fn diff(want: &str, got: &str) -> String {
    let mut out = String::new();
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    for i in 0..w.len().max(g.len()) {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => {
                out.push_str(&format!(
                    "line {}:\n  - {}\n  + {}\n",
                    i + 1,
                    a.unwrap_or(&""),
                    b.unwrap_or(&"")
                ));
            }
        }
    }
    out
}

#[test]
fn front_end_file_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front");
    let mut files = Vec::new();
    collect(&root, "py", &mut files);
    let bless = std::env::var_os("TILEC_BLESS").is_some();
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = run_file(f, bless) {
            failures.push(format!("{}:\n{e}", f.display()));
        }
    }
    assert!(
        files.len() >= 60,
        "expected at least 60 front-end test files, found {}",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} front-end tests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The examples compile without diagnostics.
#[test]
fn examples_compile() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = Vec::new();
    collect(&root, "py", &mut files);
    assert!(!files.is_empty());
    for f in files {
        let source = std::fs::read_to_string(&f).unwrap_or_default();
        let out = py::compile(&source, &py::Options::default());
        let errors: Vec<&front::Diagnostic> = out.diagnostics.iter().collect();
        assert!(errors.is_empty(), "{}: {:?}", f.display(), errors);
        assert!(out.module.is_some());
    }
}
