//! `tilec run`: compile a kernel, run it on seeded random inputs, summarize
//! every parameter, and optionally check the results against an independent
//! reference (`--check`) and dump every tensor as `.npy` (`--dump`).
//!
//! Parameters listed in the kernel's `out_idx` are outputs: they start
//! poisoned. Every other parameter is an input; one whose contents the
//! kernel changed (split-K accumulation into `C`, for example) is reported
//! as `in-out`.
//!
//! With `--backend sim` the kernel is lowered to thread-level IR for
//! `--target` (`tilec_core::lower`) and run by the SIMT interpreter on the
//! same inputs; with a plugin backend it is compiled by the plugin and run
//! on its device. `--check` then compares every parameter with the
//! reference interpreter's result on those inputs, within each dtype's
//! tolerance (matrix atoms and devices round differently from the
//! interpreter; integers must match exactly). A hazard the SIMT
//! interpreter finds (a race, a divergent barrier, ...) fails the run
//! (exit 3) with its block, thread and statement.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value};
use tilec_core::front::Label;
use tilec_core::interp::{self, RunOptions, SymbolValues, Tensor, param_shapes};
use tilec_core::ir::{DType, Function};

use crate::backends::{AUTO, BUILTIN, Backend, Plugins, SIM};
use crate::cli::RunArgs;
use crate::commands::{Context, Exit, Frontend, io_reason, print_stdout, single_function};
use crate::compare::{Comparison, compare};
use crate::diagnostics::Report;
use crate::json::{self, CheckResult, CheckedParam, Manifest, ManifestParam, RunOutput, RunParam};
use crate::rng::SplitMix64;
use crate::{npy, reference, tensors};

/// Refuse to allocate more elements than this over all parameters (each is
/// held as an 8-byte value, twice: before and after the run).
const MAX_ELEMENTS: usize = 1 << 28;

/// Why a run stopped early, and with which exit status.
#[derive(Debug)]
struct Failure {
    exit: Exit,
    /// What to tell the user; `None` when diagnostics already did. (Boxed
    /// so that the error path does not make every `Result` large.)
    report: Option<Box<Report>>,
}

impl Failure {
    /// A problem with the input or the environment (exit 1).
    fn error(report: Report) -> Self {
        Failure {
            exit: Exit::Error,
            report: Some(Box::new(report)),
        }
    }

    /// A run-time or check failure (exit 3).
    fn fail(report: Report) -> Self {
        Failure {
            exit: Exit::Failure,
            report: Some(Box::new(report)),
        }
    }

    /// A failure already reported.
    fn silent(exit: Exit) -> Self {
        Failure { exit, report: None }
    }
}

/// How a parameter is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Input,
    Output,
    InOut,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::InOut => "in-out",
        }
    }

    /// Whether the kernel writes the parameter.
    fn written(self) -> bool {
        self != Role::Input
    }
}

/// A kernel parameter as the run sees it.
#[derive(Debug)]
struct Param {
    name: String,
    dtype: DType,
    shape: Vec<usize>,
    role: Role,
}

pub fn run(args: &RunArgs, cx: &Context) -> Exit {
    let mut out = RunOutput {
        ok: false,
        file: args.source.file.display().to_string(),
        diagnostics: Vec::new(),
        error: None,
        kernel: None,
        call: None,
        backend: args.backend.clone(),
        seed: args.seed,
        symbols: Map::new(),
        time_ms: None,
        sim: None,
        params: Vec::new(),
        check: None,
    };
    let runner = match select_backend(args) {
        Ok(runner) => runner,
        Err(report) => return finish(args, cx, None, out, Err(Failure::error(report))),
    };
    let frontend = Frontend::load(&args.source, args.target.as_deref());
    out.diagnostics = frontend.json_diagnostics();
    if !args.json {
        eprint!("{}", frontend.render(&cx.renderer));
    }
    out.call = frontend.call.as_ref().map(json::call);
    let Some(module) = frontend.module.as_ref().filter(|_| frontend.succeeded()) else {
        // The diagnostics already say why.
        return finish(
            args,
            cx,
            Some(&frontend),
            out,
            Err(Failure::silent(Exit::Error)),
        );
    };
    let result = single_function(module)
        .map_err(Failure::error)
        .and_then(|func| execute(args, &runner, &frontend, func, &mut out));
    finish(args, cx, Some(&frontend), out, result)
}

/// Where the kernel runs.
enum Runner {
    Ref,
    Sim,
    /// A plugin with a runtime, with its target described.
    Plugin(Box<tilec_conformance::backend::Plugin>),
}

/// Chooses the backend: `ref`, `sim`, or a plugin with a runtime.
/// `--plugin` files must load all the same.
fn select_backend(args: &RunArgs) -> Result<Runner, Report> {
    let sim = args.backend == SIM;
    let plugins = Plugins::load_for_backend(&args.plugins.paths, &args.backend);
    if let Some(failure) = plugins.explicit_failures().into_iter().next() {
        return Err(failure);
    }
    if args.backend == AUTO {
        return Ok(best_available(args, &plugins));
    }
    if sim {
        return crate::backends::sim_target(args.target.as_deref()).map(|_| Runner::Sim);
    }
    match plugins.backend(&args.backend)? {
        Backend::Ref => match &args.target {
            Some(_) => Err(Report::error(format!(
                "`--target` selects the target of a device backend; the built-in `{BUILTIN}` takes none"
            ))),
            None => Ok(Runner::Ref),
        },
        Backend::Plugin(plugin) => {
            let name = plugin.name();
            if !plugin.has_runtime() {
                return Err(Report::error(format!(
                    "backend `{name}` is compile-only: it has no runtime"
                ))
                .with_note(format!(
                    "compile for it with `tilec compile FILE --backend {name}`"
                )));
            }
            let backend =
                tilec_conformance::backend::Plugin::load(&plugin.path, args.target.as_deref())
                    .map_err(|why| Report::error(format!("backend `{name}`: {why}")))?;
            // Before the front end: without a device there is nothing to run.
            use tilec_conformance::backend::Backend as _;
            if let Err(why) = backend.device() {
                return Err(Report::error(format!(
                    "backend `{name}` cannot run kernels here: {}",
                    why.trim_start_matches(&format!("backend `{name}` refused: "))
                ))
                .with_note(format!(
                    "`tilec compile FILE --backend {name} --target {}` still compiles; \
                     `--backend auto` falls back to the reference interpreter",
                    backend.target().name
                )));
            }
            Ok(Runner::Plugin(Box::new(backend)))
        }
    }
}

/// `--backend auto`: the first plugin (in search order) whose runtime
/// reports a device, else the reference interpreter. Says which, and why
/// each device backend was passed over, on standard error.
fn best_available(args: &RunArgs, plugins: &Plugins) -> Runner {
    use tilec_conformance::backend::Backend as _;
    let mut passed_over = Vec::new();
    for plugin in plugins.registry.plugins.iter().filter(|p| p.has_runtime()) {
        let name = plugin.name().to_string();
        match tilec_conformance::backend::Plugin::load(&plugin.path, args.target.as_deref()) {
            Ok(backend) => match backend.device() {
                // A CPU execution model of the hardware (the ascend
                // backend's) runs kernels but is no device: `auto` keeps
                // looking, and falls back to the reference interpreter.
                Ok(device) if device.is_cpu_model() => {
                    passed_over.push(format!("`{name}`: {} is not a device", device.name));
                }
                Ok(device) => {
                    if !args.json {
                        eprintln!(
                            "note: running on backend `{name}`: {} ({}), target {}",
                            device.name,
                            device.arch,
                            backend.target().name
                        );
                    }
                    return Runner::Plugin(Box::new(backend));
                }
                Err(why) => passed_over.push(format!("`{name}`: {why}")),
            },
            Err(why) => passed_over.push(format!("`{name}`: {why}")),
        }
    }
    if !args.json {
        eprintln!(
            "note: running on the reference interpreter `{BUILTIN}`: no device backend is available"
        );
        for why in passed_over {
            eprintln!("  = {why}");
        }
    }
    Runner::Ref
}

/// Prints the outcome (JSON, or the text summary and any error) and gives
/// the exit status. `frontend` is the loaded file, when it got that far.
fn finish(
    args: &RunArgs,
    cx: &Context,
    frontend: Option<&Frontend>,
    mut out: RunOutput,
    result: Result<(), Failure>,
) -> Exit {
    let (exit, report) = match result {
        Ok(()) => (Exit::Success, None),
        Err(failure) => (failure.exit, failure.report),
    };
    let source = frontend.and_then(|f| f.source.as_ref());
    if args.json {
        out.ok = exit == Exit::Success;
        if let Some(report) = &report {
            out.error = Some(report.message.clone());
            out.diagnostics
                .push(json::diagnostic(report, &out.file, source));
        }
        print_stdout(&(json::to_line(&out) + "\n"));
    } else {
        if out.kernel.is_some() {
            print_stdout(&render_summary(&out));
        }
        if let Some(check) = &out.check {
            print_stdout(&render_check(check));
        }
        if let Some(report) = &report {
            eprint!("{}", cx.renderer.render(report, source));
        }
    }
    exit
}

/// Everything after a successful compile.
fn execute(
    args: &RunArgs,
    runner: &Runner,
    frontend: &Frontend,
    func: &Function,
    out: &mut RunOutput,
) -> Result<(), Failure> {
    out.kernel = Some(func.name.clone());
    let defines = args.source.defines();
    let symbols = symbol_values(func, &defines).map_err(Failure::error)?;
    out.symbols = symbols
        .iter()
        .map(|(name, &value)| (name.clone(), Value::from(value)))
        .collect();
    let shapes = param_shapes(func, &symbols).map_err(|e| {
        Failure::error(Report::error(format!(
            "cannot compute the shapes of `{}`'s parameters: {e}",
            func.name
        )))
    })?;
    let options = RunOptions {
        symbols,
        step_limit: args.max_interp_steps.unwrap_or(interp::DEFAULT_STEP_LIMIT),
        memory_limit: args.max_interp_memory,
    };
    // On an interpreter, refused before the arguments are allocated.
    if matches!(runner, Runner::Ref | Runner::Sim) {
        interp::check_arguments_fit(&shapes, &options)
            .map_err(|e| Failure::error(interp_limit_report(&func.name, &e.to_string(), None)))?;
    }
    let mut params = describe_params(func, shapes)?;

    let mut tensors: Vec<Tensor> = params
        .iter()
        .enumerate()
        .map(|(index, p)| match p.role {
            Role::Output => tensors::poisoned(p.dtype, &p.shape),
            _ => tensors::random(p.dtype, &p.shape, SplitMix64::for_param(args.seed, index)),
        })
        .collect();
    let before = tensors.clone();
    out.params = params
        .iter()
        .enumerate()
        .map(|(i, p)| run_param(i, p, None))
        .collect();

    let mut dump = match &args.dump {
        Some(dir) => Some(Dump::start(dir, &params, &before)?),
        None => None,
    };

    // Symbols go to the interpreter too (`options` above): a symbol that no
    // parameter extent names on its own can only be bound this way.
    match runner {
        Runner::Ref => {}
        Runner::Sim => {
            return execute_sim(args, frontend, func, params, before, tensors, &options, out);
        }
        Runner::Plugin(plugin) => {
            return execute_plugin(
                args, frontend, func, plugin, params, before, tensors, &options, out,
            );
        }
    }
    let start = Instant::now();
    let result = interp::run_with(func, &mut tensors, &options);
    let elapsed = start.elapsed();
    if let Err(e) = result {
        if let Some(dump) = &mut dump {
            dump.finish(args, frontend, func, &params, None)?;
        }
        if e.is_limit() {
            return Err(Failure::error(interp_limit_report(
                &func.name,
                &e.to_string(),
                e.span(),
            )));
        }
        let mut report = Report::error(format!(
            "the kernel `{}` failed at run time: {e}",
            func.name
        ));
        if let Some(span) = e.span() {
            report.primary = Some(Box::new(Label {
                span,
                message: "while running this statement".to_string(),
            }));
        }
        if let interp::InterpError::Deadlock { waits, .. } = &e {
            for (i, (who, span)) in waits.iter().enumerate() {
                let label = Label {
                    span: *span,
                    message: format!("{who} wait here"),
                };
                if i == 0 {
                    report.primary = Some(Box::new(label));
                } else {
                    report.secondary.push(label);
                }
            }
        }
        return Err(Failure::fail(report));
    }
    out.time_ms = Some(elapsed.as_secs_f64() * 1e3);

    for ((param, was), is) in params.iter_mut().zip(&before).zip(&tensors) {
        if param.role == Role::Input && tensors::changed(was, is) {
            param.role = Role::InOut;
        }
    }
    out.params = params
        .iter()
        .zip(&tensors)
        .enumerate()
        .map(|(i, (p, t))| run_param(i, p, p.role.written().then(|| tensors::stats(t))))
        .collect();
    if let Some(dump) = &mut dump {
        dump.finish(args, frontend, func, &params, Some(&tensors))?;
    }
    if args.check {
        check(frontend, &params, &before, &tensors, out)?;
    }
    Ok(())
}

/// `--backend sim`: lower, run under the SIMT interpreter, summarize, and
/// with `--check` compare with the reference interpreter.
#[allow(clippy::too_many_arguments)]
fn execute_sim(
    args: &RunArgs,
    frontend: &Frontend,
    func: &Function,
    params: Vec<Param>,
    before: Vec<Tensor>,
    mut tensors: Vec<Tensor>,
    options: &RunOptions,
    out: &mut RunOutput,
) -> Result<(), Failure> {
    let target = crate::backends::sim_target(args.target.as_deref()).map_err(Failure::error)?;
    let module = tilec_core::ir::Module {
        functions: vec![func.clone()],
    };
    let lowered = tilec_core::lower::to_thread(&module, &target)
        .map_err(|e| Failure::error(crate::commands::compile::lower_report(&e)))?;
    // One step budget: SIMT statement steps never outnumber its thread
    // steps.
    let work_limit = args
        .max_interp_steps
        .unwrap_or(tilec_core::simt::DEFAULT_WORK_LIMIT);
    let sim_options = tilec_core::simt::SimtOptions {
        symbols: options.symbols.clone(),
        step_limit: work_limit,
        work_limit,
        memory_limit: options.memory_limit,
    };
    let start = Instant::now();
    let mut counts = tilec_core::simt::Stats::default();
    // The function's global scratch buffers follow its parameters, shared
    // by its kernels.
    let given = tensors.len();
    if let Some(first) = lowered.kernels.first() {
        let scratch = tilec_core::simt::scratch(first, &tensors, &sim_options).map_err(|e| {
            Failure::error(Report::error(format!(
                "the kernel `{}` cannot run under the SIMT interpreter: {e}",
                func.name
            )))
        })?;
        tensors.extend(scratch);
    }
    for kernel in &lowered.kernels {
        let stats = tilec_core::simt::run(kernel, &target, &mut tensors, &sim_options);
        if let Ok(stats) = &stats {
            counts.add(stats);
        }
        if let Err(e) = stats {
            if e.is_limit() {
                let span = e.location().map(|l| l.span).filter(|s| !s.is_unknown());
                return Err(Failure::error(interp_limit_report(
                    &func.name,
                    &e.to_string(),
                    span,
                )));
            }
            let mut report = Report::error(format!(
                "the kernel `{}` failed under the SIMT interpreter (target `{}`): {e}",
                func.name, target.name
            ));
            if let Some(loc) = e.location().filter(|l| !l.span.is_unknown()) {
                report.primary = Some(Box::new(Label {
                    span: loc.span,
                    message: "lowered from this statement".to_string(),
                }));
            }
            report = report.with_note(format!(
                "`tilec compile FILE --backend {SIM} --target {}` prints the thread-level IR",
                target.name
            ));
            return Err(Failure::fail(report));
        }
    }
    tensors.truncate(given);
    out.time_ms = Some(start.elapsed().as_secs_f64() * 1e3);
    out.sim = Some(counts);
    let run = Ran {
        params,
        before,
        tensors,
    };
    conclude(args, frontend, func, run, options, out)
}

/// A plugin backend: compile through the plugin, run on its device, and
/// with `--check` compare with the reference interpreter within the
/// dtype's tolerance (a device rounds differently: fused multiply-adds,
/// accumulation order, approximate transcendentals).
#[allow(clippy::too_many_arguments)]
fn execute_plugin(
    args: &RunArgs,
    frontend: &Frontend,
    func: &Function,
    plugin: &tilec_conformance::backend::Plugin,
    params: Vec<Param>,
    before: Vec<Tensor>,
    mut tensors: Vec<Tensor>,
    options: &RunOptions,
    out: &mut RunOutput,
) -> Result<(), Failure> {
    use tilec_conformance::backend::Backend as _;
    let module = tilec_core::ir::Module {
        functions: vec![func.clone()],
    };
    let name = plugin.name().to_string();
    let arch = plugin.target().name.clone();
    let device = plugin.device().map_err(|why| {
        Failure::error(Report::error(format!(
            "backend `{name}` cannot run kernels here: {why}"
        )))
    })?;
    let mut compile_options = tilec_plugin_api::CompileOptions {
        fast_math: args.fast_math || super::compile::fast_math(&module),
        ..tilec_plugin_api::CompileOptions::default()
    };
    super::compile::set_fp_contract(&mut compile_options, args.fp_contract);
    let compiled = plugin.compile(&module, &compile_options).map_err(|e| {
        Failure::error(Report::error(format!(
            "backend `{name}` could not compile `{}` for `{arch}`: {e}",
            func.name
        )))
    })?;
    let start = Instant::now();
    plugin
        .execute_with(&compiled, func, &mut tensors, &options.symbols)
        .map_err(|e| {
            Failure::fail(Report::error(format!(
                "the kernel `{}` failed on {} ({}): {e}",
                func.name, device.name, device.arch
            )))
        })?;
    out.time_ms = Some(start.elapsed().as_secs_f64() * 1e3);
    let run = Ran {
        params,
        before,
        tensors,
    };
    conclude(args, frontend, func, run, options, out)
}

/// The tensors of a finished run.
struct Ran {
    params: Vec<Param>,
    before: Vec<Tensor>,
    tensors: Vec<Tensor>,
}

/// Summarizes a lowered run, dumps it, and with `--check` compares every
/// parameter with the reference interpreter's result on the same inputs,
/// within the dtype's tolerance (`reference::tolerance`).
fn conclude(
    args: &RunArgs,
    frontend: &Frontend,
    func: &Function,
    run: Ran,
    options: &RunOptions,
    out: &mut RunOutput,
) -> Result<(), Failure> {
    let Ran {
        mut params,
        before,
        tensors,
    } = run;
    for ((param, was), is) in params.iter_mut().zip(&before).zip(&tensors) {
        if param.role == Role::Input && tensors::changed(was, is) {
            param.role = Role::InOut;
        }
    }
    out.params = params
        .iter()
        .zip(&tensors)
        .enumerate()
        .map(|(i, (p, t))| run_param(i, p, p.role.written().then(|| tensors::stats(t))))
        .collect();
    if let Some(dir) = &args.dump {
        let mut dump = Dump::start(dir, &params, &before)?;
        dump.finish(args, frontend, func, &params, Some(&tensors))?;
    }
    if !args.check {
        return Ok(());
    }
    let mut expected = before.clone();
    interp::run_with(func, &mut expected, options).map_err(|e| {
        Failure::fail(Report::error(format!(
            "the reference interpreter failed on `{}`: {e}",
            func.name
        )))
    })?;
    let checked: Vec<CheckedParam> = params
        .iter()
        .zip(&tensors)
        .zip(&expected)
        .enumerate()
        .map(|(index, ((param, actual), expected))| {
            let (atol, rtol) = reference::tolerance(param.dtype);
            let comparison = compare(actual, expected, atol, rtol);
            CheckedParam {
                index,
                name: param.name.clone(),
                dtype: param.dtype.tilelang_name(),
                passed: comparison.passed(),
                comparison,
            }
        })
        .collect();
    let failed: Vec<String> = checked
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("`{}`", c.name))
        .collect();
    // An empty stem: the check is against the reference interpreter.
    out.check = Some(CheckResult {
        stem: String::new(),
        reference: true,
        passed: failed.is_empty(),
        params: checked,
    });
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::fail(Report::error(format!(
            "check failed: {} differ{} from the reference interpreter",
            failed.join(", "),
            if failed.len() == 1 { "s" } else { "" }
        ))))
    }
}

fn run_param(index: usize, param: &Param, stats: Option<tensors::Stats>) -> RunParam {
    RunParam {
        index,
        name: param.name.clone(),
        shape: param.shape.clone(),
        dtype: param.dtype.tilelang_name(),
        role: param.role.name(),
        stats,
    }
}

/// The values of the kernel's symbolic sizes, from `-D NAME=VALUE`.
pub(crate) fn symbol_values(
    func: &Function,
    defines: &std::collections::BTreeMap<String, String>,
) -> Result<SymbolValues, Report> {
    let mut values = SymbolValues::new();
    for &symbol in &func.symbols {
        let name = &func.vars[symbol].name;
        if func.is_scalar_param(symbol) {
            values.insert(name.clone(), scalar_param_value(func, symbol, defines)?);
            continue;
        }
        let Some(text) = defines.get(name) else {
            return Err(Report::error(format!(
                "the symbolic size `{name}` of kernel `{}` has no value",
                func.name
            ))
            .with_note(format!("pass its value with `-D {name}=<integer>`")));
        };
        let Some(value) = parse_python_int(text) else {
            return Err(Report::error(format!(
                "`-D {name}={text}`: the symbolic size `{name}` needs an integer value"
            )));
        };
        if value < 0 {
            return Err(Report::error(format!(
                "`-D {name}={text}`: a size cannot be negative"
            )));
        }
        values.insert(name.clone(), value);
    }
    Ok(values)
}

/// The scalar parameters of `func` with their `-D` values, for the
/// manifest of `--dump` (a run only starts once every one has a value).
fn manifest_scalars(
    func: &Function,
    defines: &std::collections::BTreeMap<String, String>,
) -> Vec<json::ManifestScalar> {
    func.scalars
        .iter()
        .filter_map(|s| {
            let v = func.vars.try_get(s.var)?;
            Some(json::ManifestScalar {
                position: s.position,
                name: v.name.clone(),
                dtype: v.dtype.tilelang_name(),
                value: scalar_param_value(func, s.var, defines).ok()?,
            })
        })
        .collect()
}

/// The value of the scalar parameter `var`, from `-D NAME=VALUE`: TileLang
/// passes it at launch, so it needs a value even where a tensor's shape
/// would tell it.
fn scalar_param_value(
    func: &Function,
    var: tilec_core::ir::Handle<tilec_core::ir::Var>,
    defines: &std::collections::BTreeMap<String, String>,
) -> Result<i64, Report> {
    let v = &func.vars[var];
    let (name, dtype) = (&v.name, v.dtype.tilelang_name());
    let Some(text) = defines.get(name) else {
        return Err(Report::error(format!(
            "the scalar parameter `{name}: T.{dtype}` of kernel `{}` has no value",
            func.name
        ))
        .with_note(format!(
            "pass the value it takes at launch with `-D {name}=<integer>`"
        )));
    };
    let value = parse_python_int(text).filter(|&x| v.dtype.wrap_i64(x) == x);
    value.ok_or_else(|| {
        Report::error(format!(
            "`-D {name}={text}`: the scalar parameter `{name}` needs a `T.{dtype}` integer value"
        ))
    })
}

/// Parses a Python integer literal: optional sign, `_` separators, and
/// `0x` / `0o` / `0b` prefixes.
fn parse_python_int(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits = digits.replace('_', "");
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(body) = lower.strip_prefix("0x") {
        (16, body)
    } else if let Some(body) = lower.strip_prefix("0o") {
        (8, body)
    } else if let Some(body) = lower.strip_prefix("0b") {
        (2, body)
    } else {
        (10, lower.as_str())
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i64::from_str_radix(body, radix).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Names, types, shapes and initial roles of the parameters; refuses runs
/// too large for the interpreter.
fn describe_params(func: &Function, shapes: Vec<Vec<usize>>) -> Result<Vec<Param>, Failure> {
    if shapes.len() != func.params.len() {
        return Err(Failure::error(Report::error(format!(
            "internal error: {} shapes for {} parameters",
            shapes.len(),
            func.params.len()
        ))));
    }
    let mut total: usize = 0;
    let mut params = Vec::with_capacity(shapes.len());
    for (index, (param, shape)) in func.params.iter().zip(shapes).enumerate() {
        let buffer = &func.buffers[param.buffer];
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        total = match count.and_then(|c| total.checked_add(c)) {
            Some(t) if t <= MAX_ELEMENTS => t,
            _ => {
                return Err(Failure::error(
                    Report::error(format!(
                        "the parameters of `{}` are too large for the reference interpreter \
                         (the limit is passed at `{}`, of shape {shape:?})",
                        func.name, buffer.name
                    ))
                    .with_note(format!(
                        "the limit is {MAX_ELEMENTS} elements over all parameters together"
                    ))
                    .with_note("choose smaller sizes with `--kernel` or `-D`"),
                ));
            }
        };
        let is_output = func.attrs.out_idx.iter().any(|&i| i as usize == index);
        params.push(Param {
            name: buffer.name.clone(),
            dtype: buffer.dtype,
            shape,
            role: if is_output { Role::Output } else { Role::Input },
        });
    }
    Ok(params)
}

/// `--check`: compares every parameter the reference knows with the run's
/// result.
fn check(
    frontend: &Frontend,
    params: &[Param],
    before: &[Tensor],
    after: &[Tensor],
    out: &mut RunOutput,
) -> Result<(), Failure> {
    let stem = frontend.stem();
    let expected = match reference::expected(&stem, frontend.call.as_ref(), before) {
        Ok(Some(expected)) => expected,
        Ok(None) => {
            out.check = Some(CheckResult {
                stem: stem.clone(),
                reference: false,
                passed: false,
                params: Vec::new(),
            });
            return Err(Failure::fail(
                Report::error(format!("no independent reference for `{stem}`")).with_note(
                    "references are chosen by the file's stem; see `tools/src/reference`",
                ),
            ));
        }
        Err(why) => {
            return Err(Failure::fail(Report::error(format!(
                "the reference for `{stem}` failed: {why}"
            ))));
        }
    };
    if expected.is_empty() {
        return Err(Failure::fail(Report::error(format!(
            "the reference for `{stem}` checks no parameter"
        ))));
    }
    let mut checked = Vec::with_capacity(expected.len());
    for (index, expected) in &expected {
        let (Some(param), Some(actual)) = (params.get(*index), after.get(*index)) else {
            return Err(Failure::fail(Report::error(format!(
                "the reference for `{stem}` gives parameter {index}, but the kernel has {}",
                params.len()
            ))));
        };
        let (atol, rtol) = reference::tolerance(param.dtype);
        let comparison: Comparison = compare(actual, expected, atol, rtol);
        checked.push(CheckedParam {
            index: *index,
            name: param.name.clone(),
            dtype: param.dtype.tilelang_name(),
            passed: comparison.passed(),
            comparison,
        });
    }
    let failed: Vec<String> = checked
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("`{}`", c.name))
        .collect();
    out.check = Some(CheckResult {
        stem,
        reference: true,
        passed: failed.is_empty(),
        params: checked,
    });
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::fail(Report::error(format!(
            "check failed: {} differ{} from the reference",
            failed.join(", "),
            if failed.len() == 1 { "s" } else { "" }
        ))))
    }
}

/// The files of `--dump`.
#[derive(Debug)]
struct Dump {
    dir: PathBuf,
    /// Per parameter, the files written so far (`before`, `after`).
    files: Vec<Map<String, Value>>,
}

impl Dump {
    /// Creates the directory and writes the inputs.
    fn start(dir: &Path, params: &[Param], before: &[Tensor]) -> Result<Dump, Failure> {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure::error(Report::error(format!(
                "cannot create `{}`: {}",
                dir.display(),
                io_reason(&e)
            )))
        })?;
        let mut dump = Dump {
            dir: dir.to_path_buf(),
            files: vec![Map::new(); params.len()],
        };
        for (index, (param, tensor)) in params.iter().zip(before).enumerate() {
            if param.role != Role::Output {
                let name = format!("{}.in.npy", file_stem(&param.name));
                dump.write(&name, tensor)?;
                dump.files[index].insert("before".into(), Value::from(name));
            }
        }
        Ok(dump)
    }

    /// Writes the tensors after the run (when it completed) and the
    /// manifest.
    fn finish(
        &mut self,
        args: &RunArgs,
        frontend: &Frontend,
        func: &Function,
        params: &[Param],
        after: Option<&[Tensor]>,
    ) -> Result<(), Failure> {
        if let Some(after) = after {
            for (index, (param, tensor)) in params.iter().zip(after).enumerate() {
                let name = format!("{}.npy", file_stem(&param.name));
                self.write(&name, tensor)?;
                self.files[index].insert("after".into(), Value::from(name));
            }
        }
        let manifest = Manifest {
            kernel: func.name.clone(),
            file: frontend.file.clone(),
            call: frontend.call.as_ref().map(json::call),
            defines: args
                .source
                .defines()
                .into_iter()
                .map(|(k, v)| (k, Value::from(v)))
                .collect(),
            seed: args.seed,
            backend: args.backend.clone(),
            completed: after.is_some(),
            params: params
                .iter()
                .zip(&self.files)
                .enumerate()
                .map(|(index, (param, files))| ManifestParam {
                    index,
                    name: param.name.clone(),
                    shape: param.shape.clone(),
                    dtype: param.dtype.tilelang_name(),
                    stored_dtype: npy::stored_dtype(param.dtype).1,
                    role: param.role.name(),
                    files: files.clone(),
                })
                .collect(),
            scalars: manifest_scalars(func, &args.source.defines()),
        };
        let text =
            serde_json::to_string_pretty(&manifest).unwrap_or_else(|_| json::to_line(&manifest));
        let path = self.dir.join("manifest.json");
        crate::output::write(&path, (text + "\n").as_bytes()).map_err(|e| write_error(&path, &e))
    }

    fn write(&self, name: &str, tensor: &Tensor) -> Result<(), Failure> {
        let path = self.dir.join(name);
        npy::write(&path, tensor).map_err(|e| write_error(&path, &e))
    }
}

fn write_error(path: &Path, error: &std::io::Error) -> Failure {
    Failure::error(Report::error(format!(
        "cannot write `{}`: {}",
        path.display(),
        io_reason(error)
    )))
}

/// A file name made from a parameter name: anything but ASCII letters,
/// digits, `_` and `-` becomes `_`.
fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "_".to_string()
    } else {
        stem
    }
}

/// A number for a human: integers exactly, others to about 6 significant
/// digits, very large or small ones in scientific notation.
fn format_number(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    if value == value.trunc() && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let magnitude = value.abs();
    if (1e-3..1e6).contains(&magnitude) {
        let decimals = (5 - magnitude.log10().floor() as i32).clamp(0, 8) as usize;
        let text = format!("{value:.decimals$}");
        let text = text.trim_end_matches('0');
        text.trim_end_matches('.').to_string()
    } else {
        // `1.2500e-7` → `1.25e-7`
        let text = format!("{value:.4e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => {
                let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{mantissa}e{exponent}")
            }
            _ => text,
        }
    }
}

/// A builder argument as Python would write it (`True`, `"float16"`).
fn python_value(value: &Value) -> String {
    match value {
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Null => "None".to_string(),
        other => other.to_string(),
    }
}

fn format_option(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), format_number)
}

/// Lays out rows as left-aligned columns two spaces apart.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::from(" ");
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(line, " {cell:<width$} ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn render_summary(out: &RunOutput) -> String {
    let mut text = String::new();
    let kernel = out.kernel.as_deref().unwrap_or("?");
    let _ = write!(text, "kernel `{kernel}` from {}", out.file);
    if let Some(call) = &out.call {
        let builder = call.get("builder").and_then(Value::as_str).unwrap_or("?");
        let args: Vec<String> = call
            .get("args")
            .and_then(Value::as_object)
            .map(|args| {
                args.iter()
                    .map(|(k, v)| format!("{k}={}", python_value(v)))
                    .collect()
            })
            .unwrap_or_default();
        let _ = write!(text, ", built by {builder}({})", args.join(", "));
    }
    let _ = writeln!(text, "; backend {}, seed {}", out.backend, out.seed);
    if !out.symbols.is_empty() {
        let symbols: Vec<String> = out
            .symbols
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(text, "symbols: {}", symbols.join(", "));
    }
    let mut rows = vec![
        [
            "#", "name", "shape", "dtype", "role", "min", "max", "mean", "abs-sum", "nan", "inf",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for p in &out.params {
        let mut row = vec![
            p.index.to_string(),
            p.name.clone(),
            format!("{:?}", p.shape),
            p.dtype.to_string(),
            p.role.to_string(),
        ];
        if let Some(s) = &p.stats {
            row.extend([
                format_option(s.min),
                format_option(s.max),
                format_option(s.mean),
                format_option(s.abs_sum),
                s.nan.to_string(),
                s.inf.to_string(),
            ]);
        }
        rows.push(row);
    }
    text.push_str(&table(&rows));
    if let Some(ms) = out.time_ms {
        let _ = writeln!(text, "ran in {ms:.3} ms");
    }
    if let Some(c) = &out.sim {
        let _ = writeln!(
            text,
            "SIMT interpreter counted: blocks {}, barriers {}, shuffles {}, matrix atoms {}, matrix loads {}, matrix stores {}",
            c.blocks, c.barriers, c.shuffles, c.mma, c.matrix_loads, c.matrix_stores
        );
        let _ = writeln!(
            text,
            "shared-memory bank passes: loads {} (conflict-free: {}), stores and async copies {} (conflict-free: {})",
            c.shared_load_passes,
            c.shared_load_passes_ideal,
            c.shared_store_passes,
            c.shared_store_passes_ideal
        );
    }
    text
}

fn render_check(check: &CheckResult) -> String {
    let mut text = String::new();
    if !check.reference {
        return text;
    }
    if check.stem.is_empty() {
        let _ = writeln!(
            text,
            "check against the reference interpreter (dtype tolerance):"
        );
    } else {
        let _ = writeln!(
            text,
            "check against the independent reference for `{}`:",
            check.stem
        );
    }
    for p in &check.params {
        let c = &p.comparison;
        let verdict = if p.passed { "ok" } else { "MISMATCH" };
        if let Some(why) = &c.shape_error {
            let _ = writeln!(text, "  {} ({}): {verdict}: {why}", p.name, p.dtype);
            continue;
        }
        let _ = writeln!(
            text,
            "  {} ({}): {verdict}: {} of {} elements differ; max abs err {}, max rel err {} \
             (atol {}, rtol {})",
            p.name,
            p.dtype,
            c.mismatches,
            c.total,
            format_number(c.max_abs_err),
            format_number(c.max_rel_err),
            format_number(c.atol),
            format_number(c.rtol),
        );
        for m in &c.first_mismatches {
            let _ = writeln!(
                text,
                "      at {:?}: got {}, expected {}",
                m.index,
                format_number(m.actual),
                format_number(m.expected)
            );
        }
        if c.mismatches > c.first_mismatches.len() {
            let _ = writeln!(
                text,
                "      ... and {} more",
                c.mismatches - c.first_mismatches.len()
            );
        }
    }
    text
}

/// The code of a run that stopped at an interpreter limit.
const INTERP_LIMIT: &str = "T0500";

/// A run refused or stopped at a limit of the interpreters: T0500, naming
/// the flags that raise the limits.
fn interp_limit_report(function: &str, detail: &str, span: Option<tilec_core::ir::Span>) -> Report {
    let mut report = Report::error(format!(
        "the kernel `{function}` reached an interpreter limit: {detail}"
    ));
    report.code = Some(INTERP_LIMIT);
    if let Some(span) = span {
        report.primary = Some(Box::new(Label {
            span,
            message: "while running this statement".to_string(),
        }));
    }
    report.with_note(
        "`--max-interp-memory BYTES` and `--max-interp-steps N` raise the interpreters' limits",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::ir::{Buffer, Literal, Scope, VarKind};

    #[test]
    fn python_ints() {
        assert_eq!(parse_python_int("1024"), Some(1024));
        assert_eq!(parse_python_int("1_024"), Some(1024));
        assert_eq!(parse_python_int("-3"), Some(-3));
        assert_eq!(parse_python_int("0x10"), Some(16));
        assert_eq!(parse_python_int("0b101"), Some(5));
        assert_eq!(parse_python_int("1.5"), None);
        assert_eq!(parse_python_int("--1"), None);
        assert_eq!(parse_python_int("True"), None);
    }

    #[test]
    fn numbers_for_humans() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-0.125), "-0.125");
        assert_eq!(format_number(1.0 / 3.0), "0.333333");
        assert_eq!(format_number(12345.678), "12345.7");
        assert_eq!(format_number(1e-7), "1e-7");
        assert_eq!(format_number(1.25e-7), "1.25e-7");
        assert_eq!(format_number(-3.5e-9), "-3.5e-9");
        assert_eq!(format_number(3e9), "3000000000");
        assert_eq!(format_number(1.2e20), "1.2e20");
        assert_eq!(format_number(f64::NAN), "nan");
    }

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(file_stem("A_shared"), "A_shared");
        assert_eq!(file_stem("../x"), "___x");
        assert_eq!(file_stem(""), "_");
    }

    /// `f(A: [M, 4] f16, B: [M, 4] f32)` with `out_idx = [1]`.
    fn symbolic_function() -> Function {
        let mut f = Function::new("f");
        let m = f.add_var("M", DType::I32, VarKind::Symbolic);
        f.symbols.push(m);
        let m_expr = f.var_expr(m);
        let four = f.lit(Literal::Int(4, DType::I32));
        for (name, dtype) in [("A", DType::F16), ("B", DType::F32)] {
            let buffer = f.add_buffer(
                Buffer {
                    name: name.into(),
                    dtype,
                    shape: vec![m_expr, four],
                    scope: Scope::Global,
                    placement: None,
                    layout: None,
                },
                tilec_core::ir::Span::UNKNOWN,
            );
            f.params.push(tilec_core::ir::Param { buffer });
        }
        f.attrs.out_idx = vec![1];
        f
    }

    #[test]
    fn symbols_come_from_defines() {
        let f = symbolic_function();
        let mut defines = std::collections::BTreeMap::new();
        let missing = symbol_values(&f, &defines).err();
        let notes = missing.map(|r| r.notes).unwrap_or_default();
        assert!(notes.iter().any(|n| n.contains("-D M=")), "{notes:?}");
        defines.insert("M".to_string(), "x".to_string());
        assert!(symbol_values(&f, &defines).is_err());
        defines.insert("M".to_string(), "3".to_string());
        let values = symbol_values(&f, &defines).ok().unwrap_or_default();
        assert_eq!(values.get("M"), Some(&3));

        let shapes = param_shapes(&f, &values).unwrap_or_default();
        let params = describe_params(&f, shapes).unwrap_or_default();
        let roles: Vec<Role> = params.iter().map(|p| p.role).collect();
        assert_eq!(roles, vec![Role::Input, Role::Output]);
        assert_eq!(params[0].shape, vec![3, 4]);
    }

    #[test]
    fn huge_runs_are_refused() {
        let f = symbolic_function();
        let result = describe_params(&f, vec![vec![1 << 20, 1 << 20], vec![1, 1]]);
        assert!(result.is_err());
        let result = describe_params(&f, vec![vec![usize::MAX, 2], vec![1, 1]]);
        assert!(result.is_err());
    }
}
