//! Running one planned test against a backend, in the worker process.
//!
//! The outcome rules (see `docs/conformance.md`):
//!
//! - a structured refusal of a test whose capabilities the target claims
//!   is a `Fail` (the plan already turned unclaimed ones into
//!   `NotSupported`); so is any other refusal, a malformed answer, a wrong
//!   number, or two runs that differ;
//! - a panic caught at the ABI boundary is a `Crash` (a process that dies
//!   is recorded as a `Crash` by the supervisor);
//! - a failure of the suite itself — the front end refusing a corpus
//!   kernel, the reference interpreter failing — is an `InternalError`;
//! - at L1, a code object among the artifacts that breaks the target's
//!   limits is a `Fail`, and one whose kernels use scratch, spill
//!   registers or need local memory is a `QualityWarning` (see
//!   [`crate::binary`]).

use crate::backend::{Backend, BackendError, Plugin};
use crate::binary;
use crate::corpus::Case;
use crate::inputs;
use crate::plan::{AbiCheck, PlannedTest, TestKind, claimed};
use crate::result::{Outcome, TestRecord};
use crate::tolerance::{self, Comparison, OpClass};
use std::collections::BTreeMap;
use std::time::Instant;
use tilec_core::front::py::{self, Options};
use tilec_core::interp::{self, Tensor, TensorData};
use tilec_core::ir::{Function, Module};
use tilec_plugin_api::{CompileOptions, CompileResult, ErrorCode, TILE_IR_FORMAT};

/// What a test found, before timing is added.
struct Verdict {
    outcome: Outcome,
    message: String,
    max_abs_err: Option<f64>,
    max_ulp_err: Option<f64>,
}

impl Verdict {
    fn pass(message: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::Pass, message)
    }

    fn fail(message: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::Fail, message)
    }

    /// Correct, but the result will be slow: conformant, and reported.
    fn quality_warning(message: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::QualityWarning, message)
    }

    fn internal(message: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::InternalError, message)
    }

    fn new(outcome: Outcome, message: impl Into<String>) -> Verdict {
        Verdict {
            outcome,
            message: message.into(),
            max_abs_err: None,
            max_ulp_err: None,
        }
    }

    /// The verdict for a backend call that did not answer, in `what`.
    fn backend(what: &str, error: &BackendError, claims: bool) -> Verdict {
        match error {
            BackendError::Panic(message) => {
                Verdict::new(Outcome::Crash, format!("{what}: panicked: {message}"))
            }
            BackendError::Refused(e)
                if claims
                    && matches!(
                        e.code,
                        ErrorCode::UnsupportedFeature | ErrorCode::UnsupportedDtype
                    ) =>
            {
                Verdict::fail(format!(
                    "{what}: refused a capability the target claims: {error}"
                ))
            }
            _ => Verdict::fail(format!("{what}: {error}")),
        }
    }
}

/// Everything a test may use.
#[derive(Debug)]
pub struct Context<'a> {
    pub backend: &'a dyn Backend,
    /// Set when the backend is a plugin (for the ABI checks).
    pub plugin: Option<&'a Plugin>,
    /// The corpus, by case id.
    pub cases: &'a BTreeMap<String, Case>,
    pub options: CompileOptions,
}

/// Runs `test` and records its outcome.
pub fn run_test(ctx: &Context<'_>, test: &PlannedTest) -> TestRecord {
    let start = Instant::now();
    let verdict = match &test.not_supported {
        Some(why) => Verdict::new(Outcome::NotSupported, why.clone()),
        None => match (&test.kind, test.case.as_ref().map(|c| ctx.cases.get(c))) {
            (TestKind::Abi(check), _) => match ctx.plugin {
                Some(plugin) => abi_check(ctx, plugin, *check),
                None => Verdict::internal("ABI checks need a plugin"),
            },
            (_, Some(Some(case))) => match test.kind {
                TestKind::Refusal => refusal(ctx, case),
                TestKind::Compile => compile_test(ctx, case),
                TestKind::Execute => execute_test(ctx, case, test.seed),
                TestKind::Abi(_) => Verdict::internal("unreachable"),
            },
            _ => Verdict::internal(format!("test `{}` names no corpus case", test.id)),
        },
    };
    TestRecord {
        id: test.id.clone(),
        level: test.level,
        outcome: verdict.outcome,
        duration_ms: start.elapsed().as_secs_f64() * 1e3,
        seed: test.seed,
        max_abs_err: verdict.max_abs_err,
        max_ulp_err: verdict.max_ulp_err,
        message: verdict.message,
    }
}

/// Compiles a corpus case's `.py` file with tilec's front end.
fn front_end(case: &Case) -> Result<py::Output, String> {
    let source = std::fs::read_to_string(&case.file)
        .map_err(|e| format!("cannot read {}: {e}", case.file.display()))?;
    let options = Options {
        kernel: case.kernel.clone(),
        defines: case.defines.clone(),
        target: None,
    };
    Ok(py::compile(&source, &options))
}

/// The module of a positive case, or an internal error.
fn module_of(case: &Case) -> Result<Module, Verdict> {
    let out = front_end(case).map_err(Verdict::internal)?;
    if out.has_errors() {
        let errors: Vec<String> = out
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}: {}", d.code, d.message))
            .collect();
        return Err(Verdict::internal(format!(
            "the front end refused the corpus kernel: {}",
            errors.join("; ")
        )));
    }
    out.module
        .ok_or_else(|| Verdict::internal("the front end produced no module"))
}

fn claims_all(ctx: &Context<'_>, case: &Case) -> bool {
    let claims = claimed(ctx.backend.target());
    case.needs.iter().all(|n| claims.contains(n))
}

/// Whether `code` is a front-end diagnostic code (`T0301`).
fn is_front_code(code: &str) -> bool {
    code.len() == 5
        && code.starts_with(['T', 'W', 'P'])
        && code[1..].bytes().all(|b| b.is_ascii_digit())
}

fn refusal(ctx: &Context<'_>, case: &Case) -> Verdict {
    let Some(expected) = case.expect_error.as_deref() else {
        return Verdict::internal("not a negative case");
    };
    if case.file.extension().is_some_and(|e| e == "tir") {
        return invalid_ir(ctx, case);
    }
    if is_front_code(expected) {
        return match front_end(case) {
            Err(e) => Verdict::internal(e),
            Ok(out) => {
                let codes: Vec<&str> = out
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| d.code)
                    .collect();
                if codes.contains(&expected) {
                    Verdict::pass(format!("refused with {expected}"))
                } else {
                    Verdict::fail(format!("expected error {expected}, got {codes:?}"))
                }
            }
        };
    }
    let module = match module_of(case) {
        Ok(m) => m,
        Err(v) => return v,
    };
    // With no `needs`, no capability makes the kernel valid: it must
    // always be refused.
    let claims = !case.needs.is_empty() && claims_all(ctx, case);
    match ctx.backend.compile(&module, &ctx.options) {
        Ok(_) if claims => Verdict::pass("compiled (the target claims what the kernel needs)"),
        Ok(_) => Verdict::fail(format!(
            "compiled a kernel the target cannot run: expected a refusal with {expected}"
        )),
        Err(BackendError::Refused(e)) if !claims && e.code.name() == expected => {
            Verdict::pass(format!("refused with {expected}: {}", e.message))
        }
        Err(e @ BackendError::Refused(_)) if !claims => {
            Verdict::fail(format!("expected a refusal with {expected}, got {e}"))
        }
        Err(e) => Verdict::backend("compile", &e, claims),
    }
}

/// A malformed-IR case: the text must not parse, or must fail to verify
/// and then be refused by the backend with `InvalidIr`.
fn invalid_ir(ctx: &Context<'_>, case: &Case) -> Verdict {
    let text = match std::fs::read_to_string(&case.file) {
        Ok(t) => t,
        Err(e) => return Verdict::internal(format!("cannot read {}: {e}", case.file.display())),
    };
    let module = match tilec_core::text::parse_module(&text) {
        Err(e) => return Verdict::pass(format!("rejected by the IR parser: {e}")),
        Ok(m) => m,
    };
    if tilec_core::ir::verify::verify_module(&module).is_ok() {
        return Verdict::internal("the malformed-IR case parses and verifies");
    }
    match ctx.backend.compile(&module, &ctx.options) {
        Err(BackendError::Refused(e)) if e.code == ErrorCode::InvalidIr => {
            Verdict::pass(format!("refused with InvalidIr: {}", e.message))
        }
        Ok(_) => Verdict::fail("compiled IR that does not verify: expected InvalidIr"),
        Err(e @ BackendError::Refused(_)) => Verdict::fail(format!("expected InvalidIr, got {e}")),
        Err(e) => Verdict::backend("compile", &e, false),
    }
}

/// Structural checks of a compile result against the module and target.
fn structural(ctx: &Context<'_>, module: &Module, result: &CompileResult) -> Result<(), String> {
    if result.artifacts.is_empty() {
        return Err("the compile result has no artifact".into());
    }
    if let Some(a) = result.artifacts.iter().find(|a| a.bytes.is_empty()) {
        return Err(format!("artifact `{}` is empty", a.name));
    }
    if result.kernels.is_empty() {
        return Err("the compile result lists no kernel".into());
    }
    let target = ctx.backend.target();
    let shared = target
        .memory_of_kind(tilec_core::target::MemoryKind::Shared)
        .and_then(|m| m.capacity_bytes);
    let max_threads = target.threads_per_block.max_per_block;
    for k in &result.kernels {
        if k.entry.is_empty() {
            return Err("a kernel has an empty entry name".into());
        }
        if let Some(max) = max_threads
            && k.threads > max
        {
            return Err(format!(
                "kernel `{}` launches {} threads; the target allows {max}",
                k.entry, k.threads
            ));
        }
        if let Some(cap) = shared
            && k.shared_bytes > cap
        {
            return Err(format!(
                "kernel `{}` uses {} bytes of shared memory; the target has {cap}",
                k.entry, k.shared_bytes
            ));
        }
        for p in &k.params {
            let known = module.functions.iter().any(|f| {
                f.params
                    .iter()
                    .any(|fp| f.buffers[fp.buffer].name == p.name)
            });
            if !known {
                return Err(format!(
                    "kernel `{}` has a parameter `{}` that no function of the module has",
                    k.entry, p.name
                ));
            }
        }
    }
    Ok(())
}

/// Where two compile results first differ.
fn first_difference(a: &CompileResult, b: &CompileResult) -> Option<String> {
    if a.artifacts.len() != b.artifacts.len() {
        return Some(format!(
            "{} artifacts, then {}",
            a.artifacts.len(),
            b.artifacts.len()
        ));
    }
    for (x, y) in a.artifacts.iter().zip(&b.artifacts) {
        if x.name != y.name || x.kind != y.kind {
            return Some(format!("artifact `{}` became `{}`", x.name, y.name));
        }
        if x.bytes != y.bytes {
            let at = x
                .bytes
                .iter()
                .zip(&y.bytes)
                .position(|(p, q)| p != q)
                .unwrap_or(x.bytes.len().min(y.bytes.len()));
            return Some(format!("artifact `{}` differs at byte {at}", x.name));
        }
    }
    (a.kernels != b.kernels).then(|| "the kernel metadata differs".to_string())
}

fn compile_test(ctx: &Context<'_>, case: &Case) -> Verdict {
    let module = match module_of(case) {
        Ok(m) => m,
        Err(v) => return v,
    };
    let first = match ctx.backend.compile(&module, &ctx.options) {
        Ok(r) => r,
        Err(e) => return Verdict::backend("compile", &e, true),
    };
    if let Err(why) = structural(ctx, &module, &first) {
        return Verdict::fail(why);
    }
    let inspection =
        binary::inspect_artifacts(&first.artifacts, &first.kernels, ctx.backend.target());
    if !inspection.violations.is_empty() {
        return Verdict::fail(inspection.violations.join("; "));
    }
    let second = match ctx.backend.compile(&module, &ctx.options) {
        Ok(r) => r,
        Err(e) => return Verdict::backend("recompile", &e, true),
    };
    if let Some(diff) = first_difference(&first, &second) {
        return Verdict::fail(format!("recompiling is not byte-identical: {diff}"));
    }
    let bytes: usize = first.artifacts.iter().map(|a| a.bytes.len()).sum();
    let summary = format!(
        "{} artifact(s), {bytes} bytes, {} kernel(s), {} code object(s) inspected",
        first.artifacts.len(),
        first.kernels.len(),
        inspection.inspected
    );
    if inspection.warnings.is_empty() {
        Verdict::pass(summary)
    } else {
        Verdict::quality_warning(format!("{}; {summary}", inspection.warnings.join("; ")))
    }
}

/// Runs the reference interpreter; the magnitudes of accumulation tests
/// come from a second run on the inputs' absolute values.
fn reference(func: &Function, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    let mut out = inputs.to_vec();
    interp::run(func, &mut out).map_err(|e| format!("the reference interpreter failed: {e}"))?;
    Ok(out)
}

/// Magnitudes for the accumulation bound of output `i`: the larger of
/// `|expected| + 1` and the result of the kernel on absolute inputs (which
/// is `Σ|terms|` for sums and dot products). Non-finite magnitudes fall
/// back to the first form, so an overflowing magnitude run cannot widen
/// the bound to infinity.
fn magnitude(expected: &Tensor, abs_run: Option<&Tensor>) -> Tensor {
    let e = expected.to_f64_vec();
    let a = abs_run.map(Tensor::to_f64_vec);
    let data: Vec<f64> = e
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let base = if x.is_finite() { x.abs() + 1.0 } else { 1.0 };
            match a.as_ref().and_then(|a| a.get(i)) {
                Some(m) if m.is_finite() => base.max(m.abs()),
                _ => base,
            }
        })
        .collect();
    Tensor {
        dtype: tilec_core::ir::DType::F64,
        shape: expected.shape.clone(),
        data: TensorData::Float(data),
    }
}

fn execute_test(ctx: &Context<'_>, case: &Case, seed: u64) -> Verdict {
    let module = match module_of(case) {
        Ok(m) => m,
        Err(v) => return v,
    };
    let [func] = module.functions.as_slice() else {
        return Verdict::internal(format!(
            "the case has {} functions; execute tests need one",
            module.functions.len()
        ));
    };
    let given = match inputs::for_function(func, seed, case.special_values) {
        Ok(i) => i,
        Err(e) => return Verdict::internal(format!("cannot make inputs: {e}")),
    };
    let expected = match reference(func, &given) {
        Ok(r) => r,
        Err(e) => return Verdict::internal(e),
    };
    let abs_run = match &case.class {
        OpClass::Accumulation { .. } => {
            let abs: Vec<Tensor> = given.iter().map(inputs::absolute).collect();
            reference(func, &abs).ok()
        }
        _ => None,
    };
    let compiled = match ctx.backend.compile(&module, &ctx.options) {
        Ok(r) => r,
        Err(e) => return Verdict::backend("compile", &e, true),
    };
    let mut actual = given.clone();
    if let Err(e) = ctx.backend.execute(&compiled, func, &mut actual) {
        return Verdict::backend("run", &e, true);
    }

    let mut verdict = Verdict::pass("");
    let mut notes = Vec::new();
    let (mut max_abs, mut max_ulp) = (0.0f64, 0.0f64);
    for (i, param) in func.params.iter().enumerate() {
        let name = &func.buffers[param.buffer].name;
        let untouched = inputs::bits(&expected[i]) == inputs::bits(&given[i]);
        let result: Result<Comparison, _> = if untouched {
            tolerance::compare(&actual[i], &expected[i], &OpClass::BitExact, false)
        } else {
            match &case.class {
                OpClass::Accumulation {
                    reduction_len,
                    accumulator,
                    rounded_terms,
                } => tolerance::compare_accumulation(
                    &actual[i],
                    &expected[i],
                    &magnitude(&expected[i], abs_run.as_ref().map(|r| &r[i])),
                    *reduction_len,
                    *accumulator,
                    *rounded_terms,
                    ctx.options.fast_math,
                ),
                class => tolerance::compare(&actual[i], &expected[i], class, ctx.options.fast_math),
            }
        };
        match result {
            Err(e) => {
                verdict.outcome = Outcome::Fail;
                notes.push(format!("`{name}`: {e}"));
            }
            Ok(c) => {
                max_abs = max_abs.max(c.max_abs_err);
                max_ulp = max_ulp.max(c.max_ulp_err);
                if !c.passed() {
                    verdict.outcome = Outcome::Fail;
                    let role = if untouched {
                        " (an input the kernel must not change)"
                    } else {
                        ""
                    };
                    notes.push(format!("`{name}`{role}: {}", c.message()));
                }
            }
        }
    }
    verdict.max_abs_err = max_abs.is_finite().then_some(max_abs);
    verdict.max_ulp_err = max_ulp.is_finite().then_some(max_ulp);
    if verdict.outcome != Outcome::Pass {
        verdict.message = notes.join("; ");
        return verdict;
    }
    if !case.nondeterministic {
        let mut again = given.clone();
        if let Err(e) = ctx.backend.execute(&compiled, func, &mut again) {
            return Verdict::backend("second run", &e, true);
        }
        if let Some(i) =
            (0..again.len()).find(|&i| inputs::bits(&again[i]) != inputs::bits(&actual[i]))
        {
            verdict.outcome = Outcome::Fail;
            verdict.message = format!(
                "two runs on the same inputs differ in `{}` (the case is not marked nondeterministic)",
                func.buffers[func.params[i].buffer].name
            );
        }
    }
    verdict
}

/// The kernel the ABI checks compile: a float32 copy, which every target
/// can be expected to compile.
const PROBE_KERNEL: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def probe_copy(N=256):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
"#;

fn probe_module(_ctx: &Context<'_>) -> Option<Module> {
    py::compile(PROBE_KERNEL, &Options::default()).module
}

fn abi_check(ctx: &Context<'_>, plugin: &Plugin, check: AbiCheck) -> Verdict {
    let loaded = plugin.loaded();
    let info = &loaded.info;
    match check {
        AbiCheck::Info => {
            let mut problems = Vec::new();
            if info.name.is_empty() {
                problems.push("empty name".to_string());
            }
            if info.targets.is_empty() {
                problems.push("no targets".to_string());
            }
            if let Some(d) = &info.default_target
                && !info.targets.contains(d)
            {
                problems.push(format!("default target `{d}` is not among the targets"));
            }
            if let Err(e) = loaded.ir_format() {
                problems.push(e.to_string());
            }
            if problems.is_empty() {
                Verdict::pass(format!(
                    "{} {} (ABI {}, Tile IR {})",
                    info.name, info.plugin_version, loaded.abi, TILE_IR_FORMAT
                ))
            } else {
                Verdict::fail(problems.join("; "))
            }
        }
        AbiCheck::DescribeTargets => {
            for t in &info.targets {
                match loaded.describe_target(t) {
                    Ok(d) if d.arch == *t => {}
                    Ok(d) => {
                        return Verdict::fail(format!(
                            "target `{t}` describes itself as `{}`",
                            d.arch
                        ));
                    }
                    Err(e) => {
                        return Verdict::backend(
                            &format!("describe_target({t})"),
                            &e.into(),
                            false,
                        );
                    }
                }
            }
            match loaded.describe_target("tilec-no-such-target") {
                Err(e)
                    if BackendError::from(e.clone()).code() == Some(ErrorCode::UnknownTarget) =>
                {
                    Verdict::pass(format!("{} target(s) described", info.targets.len()))
                }
                Ok(_) => Verdict::fail("an unknown target was described instead of refused"),
                Err(e) => Verdict::fail(format!("unknown target: expected UnknownTarget, got {e}")),
            }
        }
        AbiCheck::MalformedRequest => {
            match loaded.compile_bytes(b"this is not a compile request") {
                Err(e) => match BackendError::from(e) {
                    BackendError::Refused(r) if r.code == ErrorCode::BadRequest => {
                        Verdict::pass(format!("refused with BadRequest: {}", r.message))
                    }
                    other => Verdict::backend("malformed request", &other, false)
                        .or_fail("expected BadRequest"),
                },
                Ok(_) => Verdict::fail("bytes that are not a request compiled"),
            }
        }
        AbiCheck::CompileUnknownTarget => {
            let Some(module) = probe_module(ctx) else {
                return Verdict::internal("the probe kernel does not compile");
            };
            match loaded.compile(&module, "tilec-no-such-target", &ctx.options) {
                Err(e) => match BackendError::from(e) {
                    BackendError::Refused(r) if r.code == ErrorCode::UnknownTarget => {
                        Verdict::pass("refused with UnknownTarget")
                    }
                    other => {
                        Verdict::backend("compile", &other, false).or_fail("expected UnknownTarget")
                    }
                },
                Ok(_) => Verdict::fail("compiled for a target the plugin does not list"),
            }
        }
        AbiCheck::ConcurrentCompile => {
            let Some(module) = probe_module(ctx) else {
                return Verdict::internal("the probe kernel does not compile");
            };
            let alone = ctx.backend.compile(&module, &ctx.options);
            let options = &ctx.options;
            let together: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| plugin.compile(&module, options)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(BackendError::Panic("the compile thread panicked".into()))
                        })
                    })
                    .collect()
            });
            match alone {
                Err(e) => Verdict::backend("compile", &e, true),
                Ok(alone) => {
                    for r in together {
                        match r {
                            Err(e) => return Verdict::backend("concurrent compile", &e, true),
                            Ok(r) => {
                                if let Some(d) = first_difference(&alone, &r) {
                                    return Verdict::fail(format!(
                                        "a concurrent compile differs from a lone one: {d}"
                                    ));
                                }
                            }
                        }
                    }
                    Verdict::pass("4 concurrent compiles agree with a lone one")
                }
            }
        }
    }
}

impl Verdict {
    /// Adds what was expected to a failure's message.
    fn or_fail(mut self, expected: &str) -> Verdict {
        if self.outcome == Outcome::Fail {
            self.message = format!("{expected}, got {}", self.message);
        }
        self
    }
}
