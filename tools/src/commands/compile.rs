//! `tilec compile`: compile a kernel file with a backend and write what it
//! produces: Tile IR text with the built-in `ref`, thread-level IR text
//! (the baseline lowering, `tilec_core::lower`) with the built-in `sim`, a
//! plugin's artifacts otherwise.
//!
//! A plugin's errors and warnings about the kernel are rendered like the
//! front end's, at the source line of the statement they name (IR spans are
//! byte ranges of the source file), with the codes [`PLUGIN_ERROR`] and
//! [`PLUGIN_WARNING`].
//!
//! Before the backend gets the module, the passes `--passes` names run on
//! it (a [`Pipeline`] from the core's registry); `--print-before`,
//! `--print-after` and `--time-passes` print what the pipeline collected
//! to standard error.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tilec_core::front::{Label, Severity};
use tilec_core::ir::Module;
use tilec_core::passes::{PassContext, PassError, PassTiming, Pipeline};
use tilec_core::text::print_module;
use tilec_core::verify::AccessSite;
use tilec_plugin_api::host::{CallError, LoadedPlugin};
use tilec_plugin_api::{
    Artifact, ArtifactKind, CompileOptions, ErrorCode, KernelMetadata, PluginDiagnostic,
    PluginError, Severity as PluginSeverity,
};

use crate::backends::{Backend, Plugins};
use crate::cli::{CompileArgs, EMIT_TILE_IR};
use crate::commands::{Context, Exit, Frontend, io_reason, print_stdout};
use crate::diagnostics::Report;
use crate::json::{self, ArtifactOutput, CompileOutput};

/// Code of an error a backend plugin reports.
pub const PLUGIN_ERROR: &str = "P0001";
/// Code of a warning a backend plugin reports.
pub const PLUGIN_WARNING: &str = "P0002";

/// The `pass_configs` key that allows approximate math.
const FAST_MATH: &str = "tl.enable_fast_math";

/// What a backend produced.
#[derive(Debug)]
struct Produced {
    artifacts: Vec<Artifact>,
    kernels: Vec<KernelMetadata>,
}

pub fn run(args: &CompileArgs, cx: &Context) -> Exit {
    let pipeline = match pipeline(args) {
        Ok(pipeline) => pipeline,
        Err(report) => {
            eprint!("{}", cx.renderer.render(&report, None));
            return Exit::Usage;
        }
    };
    let mut out = CompileOutput {
        ok: false,
        file: args.source.file.display().to_string(),
        backend: args.backend.clone(),
        target: None,
        artifacts: Vec::new(),
        kernels: Vec::new(),
        diagnostics: Vec::new(),
    };
    let sim = args.backend == crate::backends::SIM;
    let plugins = Plugins::load_for_backend(&args.plugins.paths, &args.backend);
    let selected = if sim {
        select_sim(args, &plugins)
    } else {
        select(args, &plugins)
    };
    let (backend, target) = match selected {
        Ok(selected) => selected,
        Err(reports) => return finish(args, cx, out, None, &reports),
    };
    out.target.clone_from(&target);

    let mut phases = Phases::default();
    let started = Instant::now();
    let mut frontend = Frontend::load(&args.source, target.as_deref());
    phases.record("front end", started);
    let started = Instant::now();
    let mut timings = Vec::new();
    let mut pass_cx = None;
    if frontend.succeeded()
        && let Some(module) = frontend.module.as_mut()
    {
        match run_passes(&pipeline, module, &backend, target.as_deref(), &mut timings) {
            Ok(cx) => pass_cx = cx,
            Err(report) => frontend.reports.push(report),
        }
    }
    if !pipeline.passes().is_empty() {
        phases.record("passes", started);
    }
    let started = Instant::now();
    let mut lower_options = tilec_core::lower::LowerOptions::default();
    if args.verify
        && frontend.succeeded()
        && let Some(module) = &frontend.module
    {
        let (reports, proved) = verify_reports(
            module,
            &backend,
            target.as_deref(),
            frontend.source.as_ref(),
        );
        frontend.reports.extend(reports);
        lower_options.proved = proved;
        phases.record("verify", started);
    }
    // The lowering step that ends `--passes`, after `--verify` so that it
    // leaves out the guards of proved accesses as the backend would.
    let started = Instant::now();
    let mut lowered = None;
    if let Some(mut pass_cx) = pass_cx
        && let Some(lowering) = pipeline.lowering()
        && frontend.succeeded()
        && let Some(module) = &frontend.module
    {
        pass_cx.lower = lower_options.clone();
        match pipeline.run_lowering(module, &pass_cx) {
            Ok(Some((thread_module, report))) => {
                print_report(&report);
                timings.extend(report.timings);
                lowered = Some(thread_module);
            }
            Ok(None) => {}
            Err(failure) => {
                print_report(&failure.report);
                timings.extend(failure.report.timings);
                frontend.reports.push(pass_failure(failure.error));
            }
        }
        phases.record(lowering.name(), started);
    }
    if args.time_passes && !pipeline.is_empty() {
        eprint!("{}", timing_table(&timings));
    }
    let started = Instant::now();
    let mut produced = None;
    if frontend.succeeded()
        && let Some(module) = &frontend.module
    {
        let phase = match backend {
            Backend::Ref if sim && args.emit.as_deref() != Some(EMIT_TILE_IR) => {
                if lowered.is_some() {
                    "printing thread IR (lowered by --passes)"
                } else {
                    "lowering (sim: to thread IR, verified, printed)"
                }
            }
            Backend::Ref => "printing Tile IR",
            Backend::Plugin(_) => "backend plugin (lowering and code generation)",
        };
        // The lowering and the plugin recurse over the IR: they run on a
        // thread of a large stack, a margin beyond the depth limit that the
        // front end, the reader and the verifier enforce.
        let (result, reports) = on_large_stack(|| match backend {
            Backend::Ref if sim && args.emit.as_deref() != Some(EMIT_TILE_IR) => {
                match lowered.take() {
                    // `--passes` ended with the same lowering, for the same
                    // target and proofs: its result is the artifact.
                    Some(thread_module) => (
                        Some(thread_artifact(&thread_module, &frontend.stem())),
                        Vec::new(),
                    ),
                    None => thread_ir(module, target.as_deref(), &frontend.stem(), &lower_options),
                }
            }
            Backend::Ref => (Some(tile_ir(module, &frontend.stem())), Vec::new()),
            Backend::Plugin(plugin) => plugin_compile(
                plugin,
                module,
                target.as_deref().unwrap_or(""),
                args,
                &lower_options,
                frontend.source.as_ref(),
            ),
        })
        .unwrap_or_else(|| {
            let report = Report::error("cannot start a thread to lower the kernel on").with_note(
                "the system refused a thread with a 64 MiB stack; free memory and retry",
            );
            (None, vec![report])
        });
        frontend.reports.extend(reports);
        produced = result.filter(|_| !frontend.has_errors());
        phases.record(phase, started);
    }
    if args.time_passes {
        eprint!("{}", phases.table());
    }
    let Some(produced) = produced else {
        return finish(args, cx, out, Some(&frontend), &[]);
    };
    out.kernels.clone_from(&produced.kernels);
    let mut reports = Vec::new();
    let kernel = frontend
        .module
        .as_ref()
        .and_then(|m| m.functions.first())
        .map(|f| f.name.as_str());
    match write_artifacts(args, &produced.artifacts, kernel) {
        Ok(artifacts) => {
            out.artifacts = artifacts;
            out.ok = true;
        }
        Err(report) => reports.push(report),
    }
    finish(args, cx, out, Some(&frontend), &reports)
}

/// Stack of the thread that lowers and calls the plugin.
const LOWERING_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a thread with a [`LOWERING_STACK_BYTES`] stack and returns
/// its result; a panic propagates. `None` when no thread could be started.
fn on_large_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("tilec-lower".into())
            .stack_size(LOWERING_STACK_BYTES)
            .spawn_scoped(scope, f)
            .ok()?;
        match handle.join() {
            Ok(out) => Some(out),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The pipeline of `--passes`, with the points `--print-before` and
/// `--print-after` name; a usage error when such a point names a pass that
/// does not run. (clap has already checked that every name is registered.)
fn pipeline(args: &CompileArgs) -> Result<Pipeline, Report> {
    let names = args
        .passes
        .as_ref()
        .map(|list| list.0.clone())
        .unwrap_or_default();
    let mut pipeline =
        Pipeline::from_names(names.iter().copied()).map_err(|e| Report::error(e.to_string()))?;
    let points = [
        ("--print-before", &args.print_before),
        ("--print-after", &args.print_after),
    ];
    for (flag, names) in points {
        for &name in names {
            if !pipeline.contains(name) {
                return Err(Report::error(format!(
                    "`{flag}={name}` names a pass that does not run"
                ))
                .with_note(format!("add it to the passes to run: `--passes {name}`")));
            }
            let added = if flag == "--print-before" {
                pipeline.print_before(name)
            } else {
                pipeline.print_after(name)
            };
            added.map_err(|e| Report::error(e.to_string()))?;
        }
    }
    Ok(pipeline)
}

/// `--verify`: the obligations of every kernel, for the compile's target
/// (sm_80 when there is none); a refuted or undecided one is an error.
fn verify_reports(
    module: &Module,
    backend: &Backend<'_>,
    target: Option<&str>,
    source: Option<&crate::diagnostics::SourceFile>,
) -> (Vec<Report>, Vec<HashSet<AccessSite>>) {
    let description = match (backend, target) {
        (Backend::Plugin(plugin), Some(t)) => match plugin.describe_target(t) {
            Ok(description) => description,
            Err(e) => {
                return (
                    vec![Report::error(format!(
                        "cannot describe target `{t}` for --verify: {e}"
                    ))],
                    Vec::new(),
                );
            }
        },
        (_, t) => match crate::commands::verify::target_of(t) {
            Ok(description) => description,
            Err(report) => return (vec![report], Vec::new()),
        },
    };
    crate::commands::verify::compile_reports(module, &description, source)
}

/// Runs the pipeline on the module, printing the IR where asked and the
/// timing table to standard error (also when a pass fails, with what was
/// collected until then).
/// Runs the Tile passes of `--passes` on `module`, printing what
/// `--print-before`/`--print-after` asked for and adding the passes'
/// times to `timings`; the context they ran with (which the lowering step
/// then runs with), or `None` when the pipeline is empty.
fn run_passes(
    pipeline: &Pipeline,
    module: &mut Module,
    backend: &Backend<'_>,
    target: Option<&str>,
    timings: &mut Vec<PassTiming>,
) -> Result<Option<PassContext>, Report> {
    if pipeline.is_empty() {
        return Ok(None);
    }
    let mut cx = PassContext::default();
    cx.target = match (backend, target) {
        (_, None) => None,
        (Backend::Ref, Some(t)) => tilec_core::target::builtin(t).ok(),
        (Backend::Plugin(plugin), Some(t)) => Some(plugin.describe_target(t).map_err(|e| {
            Report::error(format!("cannot describe target `{t}` for the passes: {e}"))
        })?),
    };
    let (report, failure) = match pipeline.run(module, &cx) {
        Ok(report) => (report, None),
        Err(failure) => (failure.report, Some(failure.error)),
    };
    print_report(&report);
    timings.extend(report.timings);
    match failure {
        None => Ok(Some(cx)),
        Some(error) => Err(pass_failure(error)),
    }
}

/// Prints the IR a pipeline run collected, under its header lines.
fn print_report(report: &tilec_core::passes::PipelineReport) {
    for (label, text) in &report.printed {
        eprint!("// ----- IR {label} -----\n{text}");
    }
}

/// A failed pipeline as a report: a pass that broke the IR or failed is a
/// bug in tilec.
fn pass_failure(error: PassError) -> Report {
    let mut report = Report::error(error.to_string());
    let span = match &error {
        PassError::Verify { errors, .. } | PassError::InvalidInput { errors } => errors
            .iter()
            .map(|(_, e)| e.span())
            .find(|span| !span.is_unknown()),
        PassError::Rejected { span, .. } => Some(*span).filter(|s| !s.is_unknown()),
        _ => None,
    };
    if let Some(span) = span {
        let message = match &error {
            PassError::Rejected { pass, .. } => format!("refused by `{pass}`"),
            _ => "in the IR of this statement".to_string(),
        };
        report.primary = Some(Box::new(Label { span, message }));
    }
    if matches!(error, PassError::Verify { .. } | PassError::Failed { .. }) {
        report = report.with_note(
            "this is a bug in tilec; please report it with the input file and the command line",
        );
    }
    report
}

/// The wall-clock time of each phase of `compile` (`--time-passes`).
#[derive(Default)]
struct Phases(Vec<(&'static str, std::time::Duration)>);

impl Phases {
    fn record(&mut self, phase: &'static str, started: Instant) {
        self.0.push((phase, started.elapsed()));
    }

    /// One row per phase, then the total, in milliseconds.
    fn table(&self) -> String {
        let width = self
            .0
            .iter()
            .map(|(p, _)| p.len())
            .chain(["phase".len()])
            .max()
            .unwrap_or(5);
        let mut out = String::from("// ----- compile phases (wall clock) -----\n");
        out.push_str(&format!("{:<width$}  {:>10}\n", "phase", "ms"));
        for (phase, d) in &self.0 {
            out.push_str(&format!(
                "{:<width$}  {:>10.3}\n",
                phase,
                d.as_secs_f64() * 1000.0
            ));
        }
        let total: std::time::Duration = self.0.iter().map(|(_, d)| *d).sum();
        out.push_str(&format!(
            "{:<width$}  {:>10.3}\n",
            "total",
            total.as_secs_f64() * 1000.0
        ));
        out
    }
}

/// `--time-passes`: one row per pass run, then the total, in milliseconds.
fn timing_table(timings: &[PassTiming]) -> String {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let width = timings
        .iter()
        .map(|t| t.pass.len())
        .chain(["total".len()])
        .max()
        .unwrap_or(5);
    let mut out = String::from("// ----- pass timing (wall clock) -----\n");
    out.push_str(&format!(
        "{:<width$}  {:>10}  {:>10}\n",
        "pass", "run ms", "verify ms"
    ));
    for t in timings {
        out.push_str(&format!(
            "{:<width$}  {:>10.3}  {:>10.3}\n",
            t.pass,
            ms(t.run),
            ms(t.verify)
        ));
    }
    let run: std::time::Duration = timings.iter().map(|t| t.run).sum();
    let verify: std::time::Duration = timings.iter().map(|t| t.verify).sum();
    out.push_str(&format!(
        "{:<width$}  {:>10.3}  {:>10.3}\n",
        "total",
        ms(run),
        ms(verify)
    ));
    out
}

/// The backend and target to compile with, after checking the arguments
/// that depend on the backend.
fn select<'a>(
    args: &CompileArgs,
    plugins: &'a Plugins,
) -> Result<(Backend<'a>, Option<String>), Vec<Report>> {
    let failures = plugins.explicit_failures();
    if !failures.is_empty() {
        return Err(failures);
    }
    let backend = plugins.backend(&args.backend).map_err(|r| vec![r])?;
    match backend {
        Backend::Ref => {
            if let Some(target) = &args.target
                && tilec_core::target::builtin(target).is_err()
            {
                return Err(vec![
                    Report::error(format!(
                        "backend `ref` knows no target `{target}`"
                    ))
                    .with_note(format!(
                        "with `ref`, `--target` names a built-in target description for the passes: {}",
                        tilec_core::target::builtin_names().join(", ")
                    )),
                ]);
            }
            if let Some(emit) = args.emit.as_deref().filter(|e| *e != EMIT_TILE_IR) {
                return Err(vec![
                    Report::error(format!(
                        "backend `ref` emits `{EMIT_TILE_IR}` only, not `{emit}`"
                    ))
                    .with_note(
                        "other outputs come from backend plugins: `--backend NAME --emit KIND`",
                    ),
                ]);
            }
            Ok((backend, args.target.clone()))
        }
        Backend::Plugin(plugin) => {
            let target = args
                .target
                .clone()
                .or_else(|| plugin.info.default_target.clone());
            let Some(target) = target else {
                return Err(vec![
                    Report::error(format!(
                        "backend `{}` has no default target; choose one with `--target ARCH`",
                        plugin.name()
                    ))
                    .with_note(format!("its targets: {}", plugin.info.targets.join(", "))),
                ]);
            };
            Ok((backend, Some(target)))
        }
    }
}

/// What `compile --emit` names for the built-in backend `sim`.
pub const EMIT_THREAD_IR: &str = "thread-ir";

/// The target of the built-in backend `sim` (the passes see it as `ref`
/// with that target), after checking `--target` and `--emit`.
fn select_sim<'a>(
    args: &CompileArgs,
    plugins: &'a Plugins,
) -> Result<(Backend<'a>, Option<String>), Vec<Report>> {
    let failures = plugins.explicit_failures();
    if !failures.is_empty() {
        return Err(failures);
    }
    let target = crate::backends::sim_target(args.target.as_deref()).map_err(|r| vec![r])?;
    if let Some(emit) = args
        .emit
        .as_deref()
        .filter(|e| *e != EMIT_THREAD_IR && *e != EMIT_TILE_IR)
    {
        return Err(vec![Report::error(format!(
            "backend `{}` emits `{EMIT_THREAD_IR}` or `{EMIT_TILE_IR}`, not `{emit}`",
            crate::backends::SIM
        ))]);
    }
    Ok((Backend::Ref, Some(target.name)))
}

/// The built-in backend `sim`'s artifact: the thread-level IR of the
/// baseline lowering, or the reports of why the module could not be
/// lowered.
fn thread_ir(
    module: &Module,
    target: Option<&str>,
    stem: &str,
    options: &tilec_core::lower::LowerOptions,
) -> (Option<Produced>, Vec<Report>) {
    let target = match crate::backends::sim_target(target) {
        Ok(t) => t,
        Err(report) => return (None, vec![report]),
    };
    match tilec_core::lower::to_thread_with(module, &target, options) {
        Ok(lowered) => (Some(thread_artifact(&lowered, stem)), Vec::new()),
        Err(e) => (None, vec![lower_report(&e)]),
    }
}

/// Thread-level IR as the built-in backend `sim`'s artifact.
fn thread_artifact(lowered: &tilec_core::thread::Module, stem: &str) -> Produced {
    Produced {
        artifacts: vec![Artifact {
            name: format!("{stem}.thr"),
            kind: ArtifactKind::Text,
            bytes: tilec_core::thread::print_module(lowered).into_bytes(),
        }],
        kernels: Vec::new(),
    }
}

/// A lowering error as a report at the statement it names.
pub fn lower_report(e: &tilec_core::lower::LowerError) -> Report {
    let mut report = Report::error(e.to_string());
    let span = e.span();
    if !span.is_unknown() {
        report.primary = Some(Box::new(Label {
            span,
            message: "this statement".to_string(),
        }));
    }
    if matches!(e, tilec_core::lower::LowerError::Unsupported { .. }) {
        report = report.with_note(
            "`--backend sim` uses the baseline lowering (docs/lowering.md); `--backend ref` runs any kernel",
        );
    }
    report
}

/// The built-in backend's one artifact: the module's Tile IR text.
fn tile_ir(module: &Module, stem: &str) -> Produced {
    Produced {
        artifacts: vec![Artifact {
            name: format!("{stem}.tir"),
            kind: ArtifactKind::Text,
            bytes: print_module(module).into_bytes(),
        }],
        kernels: Vec::new(),
    }
}

/// Whether any kernel of the module allows approximate math.
pub(crate) fn fast_math(module: &Module) -> bool {
    module.functions.iter().any(|f| f.attrs.flag(FAST_MATH))
}

/// The options a plugin compiles with: the emit kind, fast math, the
/// accesses `--verify` proved in bounds (`lower::PROVED_SITES_OPTION`),
/// which backends that use the core's lowering compile without guards,
/// and the source file the spans point into (`SOURCE_NAME_OPTION`,
/// `SOURCE_TEXT_OPTION`), for backends that annotate their output with
/// source lines.
fn plugin_options(
    module: &Module,
    args: &CompileArgs,
    lower: &tilec_core::lower::LowerOptions,
    source: Option<&crate::diagnostics::SourceFile>,
) -> CompileOptions {
    let mut extra = BTreeMap::new();
    if let Some(source) = source {
        let cwd = std::env::current_dir().ok();
        extra.insert(
            tilec_plugin_api::SOURCE_NAME_OPTION.to_string(),
            embedded_path(&args.source.file, &args.remap_path_prefix, cwd.as_deref()),
        );
        extra.insert(
            tilec_plugin_api::SOURCE_TEXT_OPTION.to_string(),
            source.text.clone(),
        );
    }
    if lower.proved.iter().any(|sites| !sites.is_empty()) {
        extra.insert(
            tilec_core::lower::PROVED_SITES_OPTION.to_string(),
            lower.encode_proved(),
        );
    }
    let mut options = CompileOptions {
        emit: args.emit.clone().unwrap_or_default(),
        fast_math: args.fast_math || fast_math(module),
        extra,
    };
    set_fp_contract(&mut options, args.fp_contract);
    options
}

/// The source path artifacts embed (see `--remap-path-prefix`): the
/// last remapping whose FROM is a prefix of the absolute path, else the
/// path relative to the working folder `cwd` when it is under it, else the
/// absolute path. Only the spelling changes, so two spellings of one file
/// embed one path.
pub(crate) fn embedded_path(
    file: &Path,
    remaps: &[(PathBuf, PathBuf)],
    cwd: Option<&Path>,
) -> String {
    let absolute = |p: &Path| match cwd {
        Some(cwd) => normalize(&cwd.join(p)),
        None => normalize(p),
    };
    let mut spellings = vec![absolute(file)];
    // A folder reached through a symbolic link (`$PWD` against the real
    // working folder) is matched by its real path too.
    if let Ok(real) = std::fs::canonicalize(file) {
        spellings.push(real);
    }
    for (from, to) in remaps.iter().rev() {
        let from = absolute(from);
        for path in &spellings {
            if let Ok(rest) = path.strip_prefix(&from) {
                return display(&if rest.as_os_str().is_empty() {
                    to.clone()
                } else {
                    to.join(rest)
                });
            }
        }
    }
    if let Some(cwd) = cwd {
        let mut bases = vec![normalize(cwd)];
        if let Ok(real) = std::fs::canonicalize(cwd) {
            bases.push(real);
        }
        for path in &spellings {
            for base in &bases {
                if let Ok(rest) = path.strip_prefix(base)
                    && !rest.as_os_str().is_empty()
                {
                    return display(rest);
                }
            }
        }
    }
    display(&spellings[0])
}

/// `.` dropped and `..` folded, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A path as text, with `/` between components on every system so that
/// the bytes do not depend on the host.
fn display(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
        .replacen("//", "/", 1)
}

/// Asks a plugin for `--fp-contract` (`tilec.fp-contract`); `off` is the
/// plugins' default, so only `fast` is sent.
pub(crate) fn set_fp_contract(options: &mut CompileOptions, mode: crate::cli::FpContract) {
    if mode != crate::cli::FpContract::Off {
        options.extra.insert(
            tilec_plugin_api::FP_CONTRACT_OPTION.to_string(),
            mode.option_value().to_string(),
        );
    }
}

/// Compiles with a plugin: what it produced (`None` after an error) and
/// its diagnostics as reports.
fn plugin_compile(
    plugin: &LoadedPlugin,
    module: &Module,
    target: &str,
    args: &CompileArgs,
    lower: &tilec_core::lower::LowerOptions,
    source: Option<&crate::diagnostics::SourceFile>,
) -> (Option<Produced>, Vec<Report>) {
    let options = plugin_options(module, args, lower, source);
    match plugin.compile(module, target, &options) {
        Ok(result) => {
            let reports = plugin_reports(plugin.name(), None, &result.diagnostics);
            let produced = Produced {
                artifacts: result.artifacts,
                kernels: result.kernels,
            };
            (Some(produced), reports)
        }
        Err(CallError::Plugin {
            plugin: name,
            error,
        }) => (None, refusal(&name, &error)),
        Err(error) => {
            let mut report = Report::error(error.to_string());
            if matches!(error, CallError::Panic { .. } | CallError::Malformed { .. }) {
                report = report.with_note(format!(
                    "this is a bug in the plugin; please report it to its vendor ({}) with the input file",
                    plugin.info.vendor
                ));
            }
            let report = report.with_note(format!(
                "backend `{}` {} was loaded from `{}`",
                plugin.name(),
                plugin.info.plugin_version,
                plugin.path.display()
            ));
            (None, vec![report])
        }
    }
}

/// The reports of a plugin's refusal: its located diagnostics, or the
/// error itself when no diagnostic is an error.
fn refusal(plugin: &str, error: &PluginError) -> Vec<Report> {
    let mut reports = Vec::new();
    if !error
        .diagnostics
        .iter()
        .any(|d| d.severity == PluginSeverity::Error)
    {
        reports.push(
            Report {
                code: Some(PLUGIN_ERROR),
                ..Report::error(error.message.clone())
            }
            .with_note(reported_by(plugin, Some(error.code))),
        );
    }
    reports.extend(plugin_reports(plugin, Some(error.code), &error.diagnostics));
    reports
}

fn reported_by(plugin: &str, code: Option<ErrorCode>) -> String {
    match code {
        Some(code) => format!("reported by backend `{plugin}` ({})", code.name()),
        None => format!("reported by backend `{plugin}`"),
    }
}

/// A plugin's diagnostics as reports at the source lines they name.
/// Notes attach to the diagnostic before them.
fn plugin_reports(
    plugin: &str,
    code: Option<ErrorCode>,
    diagnostics: &[PluginDiagnostic],
) -> Vec<Report> {
    let mut reports: Vec<Report> = Vec::new();
    for d in diagnostics {
        let (severity, code) = match d.severity {
            PluginSeverity::Error => (Severity::Error, code),
            PluginSeverity::Warning => (Severity::Warning, None),
            PluginSeverity::Note => {
                if let Some(last) = reports.last_mut() {
                    last.notes.push(d.message.clone());
                    last.notes.extend(d.notes.iter().cloned());
                    continue;
                }
                (Severity::Warning, None)
            }
        };
        let mut report = Report {
            severity,
            code: Some(if severity == Severity::Error {
                PLUGIN_ERROR
            } else {
                PLUGIN_WARNING
            }),
            ..Report::error(d.message.clone())
        };
        report.primary = d
            .location
            .as_ref()
            .filter(|l| !l.span.is_unknown())
            .map(|l| {
                Box::new(Label {
                    span: l.span,
                    message: String::new(),
                })
            });
        report.notes.extend(d.notes.iter().cloned());
        reports.push(report.with_note(reported_by(plugin, code)));
    }
    reports
}

/// Writes the artifacts where `-o` says (see `--help`); their JSON form.
/// In a folder, an artifact a plugin calls `module.EXT` is named after the
/// (first) kernel, `kernel`: `-o out/` gives `out/gemm.ptx`.
fn write_artifacts(
    args: &CompileArgs,
    artifacts: &[Artifact],
    kernel: Option<&str>,
) -> Result<Vec<ArtifactOutput>, Report> {
    let output = args.output.as_deref().filter(|p| *p != Path::new("-"));
    let mut written: Vec<Option<PathBuf>> = vec![None; artifacts.len()];
    let mut names: Vec<String> = artifacts.iter().map(|a| a.name.clone()).collect();
    match output {
        None if args.json => {}
        None => {
            if let Some(binary) = artifacts.iter().find(|a| a.kind == ArtifactKind::Binary) {
                return Err(Report::error(format!(
                    "backend `{}` produced the binary artifact `{}`, which tilec does not print",
                    args.backend, binary.name
                ))
                .with_note("write it to a file with `-o FILE`, or every artifact into a folder with `-o DIR`"));
            }
            let mut text = Vec::new();
            for a in artifacts {
                text.extend_from_slice(&a.bytes);
                if !a.bytes.is_empty() && !a.bytes.ends_with(b"\n") {
                    text.push(b'\n');
                }
            }
            write_stdout(&text)?;
        }
        Some(path) if path.is_dir() || artifacts.len() > 1 || names_a_folder(path) => {
            if !path.is_dir() {
                if path.exists() {
                    return Err(Report::error(format!(
                        "backend `{}` produced {} artifacts, but `{}` is a file",
                        args.backend,
                        artifacts.len(),
                        path.display()
                    ))
                    .with_note("give a folder with `-o DIR`: each artifact is written there under its own name"));
                }
                std::fs::create_dir_all(path).map_err(|e| {
                    Report::error(format!(
                        "cannot create the folder `{}`: {}",
                        path.display(),
                        io_reason(&e)
                    ))
                })?;
            }
            for ((artifact, written), name) in artifacts.iter().zip(&mut written).zip(&mut names) {
                if !is_plain_file_name(&artifact.name) {
                    return Err(Report::error(format!(
                        "backend `{}` named an artifact `{}`, which is not a plain file name",
                        args.backend, artifact.name
                    ))
                    .with_note("this is a bug in the plugin"));
                }
                if let Some(named) = kernel_file_name(&artifact.name, kernel) {
                    *name = named;
                }
                let file = path.join(&*name);
                write_file(&file, &artifact.bytes)?;
                *written = Some(file);
            }
        }
        Some(path) => {
            if let ([artifact], [written]) = (artifacts, written.as_mut_slice()) {
                write_file(path, &artifact.bytes)?;
                *written = Some(path.to_path_buf());
            }
        }
    }
    Ok(artifacts
        .iter()
        .zip(written)
        .zip(names)
        .map(|((a, path), name)| ArtifactOutput {
            name,
            kind: match a.kind {
                ArtifactKind::Text => "text",
                ArtifactKind::Binary => "binary",
            },
            bytes_len: a.bytes.len(),
            path: path.map(|p| p.display().to_string()),
        })
        .collect())
}

/// `module.EXT` renamed `KERNEL.EXT`, when the kernel's name is a plain
/// file name; `None` to keep the plugin's name.
fn kernel_file_name(name: &str, kernel: Option<&str>) -> Option<String> {
    let ext = name.strip_prefix("module.")?;
    let named = format!("{}.{ext}", kernel?);
    is_plain_file_name(&named).then_some(named)
}

/// Whether the user wrote `-o PATH/`: a folder, existing or not.
fn names_a_folder(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR)
}

/// A name that stays inside the folder it is joined to.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !Path::new(name).is_absolute()
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Report> {
    crate::output::write(path, bytes).map_err(|e| {
        Report::error(format!(
            "cannot write `{}`: {}",
            path.display(),
            io_reason(&e)
        ))
    })
}

/// Writes to standard output; a reader that went away (`tilec compile
/// k.py | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<(), Report> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Report::error(format!(
            "cannot write standard output: {}",
            io_reason(&e)
        ))),
        _ => Ok(()),
    }
}

/// Reports the outcome (JSON, or rendered diagnostics) and gives the exit
/// status. `reports` are problems outside the source file.
fn finish(
    args: &CompileArgs,
    cx: &Context,
    mut out: CompileOutput,
    frontend: Option<&Frontend>,
    reports: &[Report],
) -> Exit {
    out.ok = out.ok && reports.is_empty() && frontend.is_some_and(|f| !f.has_errors());
    if args.json {
        if let Some(frontend) = frontend {
            out.diagnostics = frontend.json_diagnostics();
        }
        out.diagnostics
            .extend(reports.iter().map(|r| json::diagnostic(r, &out.file, None)));
        print_stdout(&(json::to_line(&out) + "\n"));
    } else {
        if let Some(frontend) = frontend {
            eprint!("{}", frontend.render(&cx.renderer));
        }
        for report in reports {
            eprint!("{}", cx.renderer.render(report, None));
        }
    }
    if out.ok { Exit::Success } else { Exit::Error }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::ir::{Function, Span};
    use tilec_plugin_api::IrLocation;

    fn diagnostic(severity: PluginSeverity, message: &str, span: Option<Span>) -> PluginDiagnostic {
        PluginDiagnostic {
            severity,
            message: message.to_string(),
            location: span.map(|span| IrLocation {
                function: "main".to_string(),
                span,
            }),
            notes: Vec::new(),
        }
    }

    #[test]
    fn plugin_diagnostics_become_located_reports() {
        let reports = plugin_reports(
            "acme",
            Some(ErrorCode::UnsupportedDtype),
            &[
                diagnostic(PluginSeverity::Error, "no fp8", Some(Span::new(3, 9))),
                diagnostic(PluginSeverity::Note, "use float16", None),
                diagnostic(PluginSeverity::Warning, "slow", Some(Span::UNKNOWN)),
            ],
        );
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0].code, Some(PLUGIN_ERROR));
        assert!(reports[0].is_error());
        assert_eq!(
            reports[0].primary.as_ref().map(|l| l.span),
            Some(Span::new(3, 9))
        );
        assert_eq!(
            reports[0].notes,
            [
                "reported by backend `acme` (UnsupportedDtype)",
                "use float16"
            ]
        );
        assert_eq!(reports[1].code, Some(PLUGIN_WARNING));
        assert_eq!(reports[1].severity, Severity::Warning);
        // An unknown span has no place in the file.
        assert!(reports[1].primary.is_none());
    }

    #[test]
    fn a_refusal_without_located_errors_is_reported_itself() {
        let error = PluginError::new(ErrorCode::UnknownTarget, "no target `x`");
        let reports = refusal("acme", &error);
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].message, "no target `x`");
        assert_eq!(reports[0].code, Some(PLUGIN_ERROR));
        assert_eq!(
            reports[0].notes,
            ["reported by backend `acme` (UnknownTarget)"]
        );
    }

    #[test]
    fn fast_math_follows_the_pass_config() {
        let mut module = Module::default();
        module.functions.push(Function::new("main"));
        assert!(!fast_math(&module));
        module.functions[0]
            .attrs
            .pass_configs
            .insert(FAST_MATH.to_string(), "True".to_string());
        assert!(fast_math(&module));
        module.functions[0]
            .attrs
            .pass_configs
            .insert(FAST_MATH.to_string(), "False".to_string());
        assert!(!fast_math(&module));
    }

    fn compile_args(extra: &[&str]) -> CompileArgs {
        use clap::Parser as _;
        let argv = ["tilec", "compile", "k.py", "--backend", "acme"];
        match crate::cli::Cli::parse_from(argv.iter().chain(extra)).command {
            crate::cli::Command::Compile(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fast_math_comes_from_the_flag_or_the_pass_config() {
        let mut module = Module::default();
        module.functions.push(Function::new("main"));
        let lower = tilec_core::lower::LowerOptions::default();
        let options = |extra: &[&str]| plugin_options(&module, &compile_args(extra), &lower, None);
        assert!(!options(&[]).fast_math);
        let fast = options(&["--fast-math"]);
        assert!(fast.fast_math);
        assert_eq!(fast.fp_contract(), Ok(true));
    }

    #[test]
    fn fp_contract_is_passed_to_plugins_when_fast() {
        use tilec_plugin_api::FP_CONTRACT_OPTION;
        let mut module = Module::default();
        module.functions.push(Function::new("main"));
        let lower = tilec_core::lower::LowerOptions::default();
        let options = |extra: &[&str]| plugin_options(&module, &compile_args(extra), &lower, None);
        assert_eq!(options(&[]).extra.get(FP_CONTRACT_OPTION), None);
        assert_eq!(options(&["--fp-contract", "off"]).fp_contract(), Ok(false));
        let fast = options(&["--fp-contract", "fast"]);
        assert_eq!(
            fast.extra.get(FP_CONTRACT_OPTION).map(String::as_str),
            Some("fast")
        );
        assert_eq!(fast.fp_contract(), Ok(true));
    }

    #[test]
    fn proved_sites_are_passed_to_plugins() {
        use tilec_core::lower::{LowerOptions, PROVED_SITES_OPTION};
        use tilec_core::verify::AccessSite;
        let mut module = Module::default();
        module.functions.push(Function::new("main"));
        let args = compile_args(&["--verify"]);
        let nothing = LowerOptions {
            proved: vec![Default::default()],
        };
        assert!(
            plugin_options(&module, &args, &nothing, None)
                .extra
                .is_empty()
        );
        let site = AccessSite::Store {
            span: Span::UNKNOWN,
            buffer: module.functions[0].buffers.append(tilec_core::ir::Buffer {
                name: "B".to_string(),
                dtype: tilec_core::ir::DType::F32,
                shape: Vec::new(),
                scope: tilec_core::ir::Scope::Global,
                placement: None,
                layout: None,
            }),
        };
        let proved = LowerOptions {
            proved: vec![[site].into_iter().collect()],
        };
        let options = plugin_options(&module, &args, &proved, None);
        let text = options
            .extra
            .get(PROVED_SITES_OPTION)
            .cloned()
            .unwrap_or_default();
        assert_eq!(LowerOptions::decode_proved(&text), Ok(proved));
    }

    fn artifact(name: &str, kind: ArtifactKind) -> Artifact {
        Artifact {
            name: name.to_string(),
            kind,
            bytes: name.as_bytes().to_vec(),
        }
    }

    #[test]
    fn binary_artifacts_are_not_printed() {
        let args = compile_args(&[]);
        let report =
            write_artifacts(&args, &[artifact("k.cubin", ArtifactKind::Binary)], None).err();
        assert_eq!(
            report.map(|r| r.message),
            Some(
                "backend `acme` produced the binary artifact `k.cubin`, which tilec does not print"
                    .to_string()
            )
        );
    }

    #[test]
    fn several_artifacts_go_into_a_folder() {
        let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = scratch.path();
        let out = dir.join("new");
        let shown = out.display().to_string();
        let args = compile_args(&["-o", &shown]);
        let artifacts = [
            artifact("k.ptx", ArtifactKind::Text),
            artifact("k.cubin", ArtifactKind::Binary),
        ];
        let written = write_artifacts(&args, &artifacts, None).unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(
            written.iter().map(|a| a.path.clone()).collect::<Vec<_>>(),
            [
                Some(out.join("k.ptx").display().to_string()),
                Some(out.join("k.cubin").display().to_string())
            ]
        );
        assert_eq!(
            std::fs::read(out.join("k.cubin")).ok(),
            Some(b"k.cubin".to_vec())
        );
        // A file in the way is an error, and so is a name leaving the folder.
        let file = dir.join("file");
        let _ = std::fs::write(&file, "x");
        let args = compile_args(&["-o", &file.display().to_string()]);
        assert!(write_artifacts(&args, &artifacts, None).is_err());
        let args = compile_args(&["-o", &shown]);
        assert!(
            write_artifacts(&args, &[artifact("../escape", ArtifactKind::Text)], None).is_err()
        );
        assert!(!dir.join("escape").exists());
    }

    #[test]
    fn embedded_paths_do_not_depend_on_the_spelling() {
        let cwd = Path::new("/home/u/tilec");
        let none: &[(PathBuf, PathBuf)] = &[];
        for spelling in [
            "examples/gemm.py",
            "./examples/gemm.py",
            "/home/u/tilec/examples/gemm.py",
            "/home/u/tilec/./examples/../examples/gemm.py",
        ] {
            assert_eq!(
                embedded_path(Path::new(spelling), none, Some(cwd)),
                "examples/gemm.py",
                "{spelling}"
            );
        }
        assert_eq!(
            embedded_path(Path::new("/opt/k.py"), none, Some(cwd)),
            "/opt/k.py"
        );
        assert_eq!(
            embedded_path(Path::new("../k.py"), none, Some(cwd)),
            "/home/u/k.py"
        );
        let remaps = [
            (PathBuf::from("/home/u"), PathBuf::from("/src")),
            (PathBuf::from("examples"), PathBuf::from("ex")),
        ];
        assert_eq!(
            embedded_path(Path::new("examples/gemm.py"), &remaps, Some(cwd)),
            "ex/gemm.py"
        );
        assert_eq!(
            embedded_path(Path::new("../k.py"), &remaps, Some(cwd)),
            "/src/k.py"
        );
    }

    #[test]
    fn a_folder_names_the_artifact_after_the_kernel() {
        let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = scratch.path();
        let shown = format!("{}/", dir.display());
        let args = compile_args(&["-o", &shown]);
        let written = write_artifacts(
            &args,
            &[artifact("module.ptx", ArtifactKind::Text)],
            Some("gemm"),
        )
        .unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(written[0].name, "gemm.ptx");
        assert_eq!(
            std::fs::read(dir.join("gemm.ptx")).ok(),
            Some(b"module.ptx".to_vec())
        );
        assert!(!dir.join("module.ptx").exists());
        assert_eq!(kernel_file_name("k.cubin", Some("gemm")), None);
        assert_eq!(kernel_file_name("module.s", Some("../x")), None);
    }

    #[test]
    fn artifact_names_must_stay_in_the_folder() {
        assert!(is_plain_file_name("gemm.ptx"));
        for bad in ["", ".", "..", "../x", "a/b", "/etc/passwd", "a\\b"] {
            assert!(!is_plain_file_name(bad), "{bad:?}");
        }
        assert!(names_a_folder(Path::new("out/")));
        assert!(!names_a_folder(Path::new("out")));
    }
}
