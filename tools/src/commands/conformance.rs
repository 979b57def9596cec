//! `tilec conformance`: runs the conformance suite against a backend and
//! reports the result (terminal table, `results.jsonl`, `summary.json`,
//! JUnit XML). The suite itself lives in `tilec-conformance`; this command
//! picks the backend, plans the run, shows progress and writes reports.
//! Tests run in worker processes: this same executable, started as the
//! hidden `tilec conformance-worker`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tilec_conformance::corpus::{self, Case};
use tilec_conformance::plan::{self, PlannedTest, Selection};
use tilec_conformance::report;
use tilec_conformance::result::{Environment, Level, Outcome, PluginIdentity, Summary, TestRecord};
use tilec_conformance::supervisor::{self, ProbeError, Settings, WorkerCommand};
use tilec_conformance::worker::{BackendSpec, Identity};
use tilec_plugin_api::{ABI_VERSION, TILE_IR_FORMAT};

use crate::backends::{Backend, Plugins};
use crate::cli::{ConformanceArgs, ConformanceMode};
use crate::commands::{Context, Exit, io_reason, print_stdout};
use crate::diagnostics::Report;

/// The id of the record that says whether the backend loaded at all.
const LOAD_ID: &str = "tilec.l0.abi.load";

/// The longest `--timeout`, in seconds: a day. (A deadline far in the
/// future overflows the clock.)
const MAX_TIMEOUT_S: u64 = 86_400;

/// The suite's name in JUnit reports.
const SUITE: &str = "tilec-conformance";

pub fn run(args: &ConformanceArgs, cx: &Context) -> Exit {
    match conformance(args) {
        Ok(exit) => exit,
        Err(stop) => {
            eprint!("{}", cx.renderer.render(&stop.report, None));
            stop.exit
        }
    }
}

/// The hidden `tilec conformance-worker`: reads one job on standard input
/// and answers on a private channel (its standard output, moved aside
/// before the backend loads, so that nothing a plugin prints can pass for
/// a record).
pub fn worker() -> Exit {
    let stdin = std::io::stdin().lock();
    let channel = match tilec_conformance::worker::private_channel() {
        Ok(channel) => std::io::BufWriter::new(channel),
        Err(e) => {
            eprintln!("tilec conformance-worker: {e}");
            return Exit::Error;
        }
    };
    match tilec_conformance::worker::serve(stdin, channel) {
        Ok(()) => Exit::Success,
        Err(e) => {
            eprintln!("tilec conformance-worker: {e}");
            Exit::Error
        }
    }
}

/// An error that stops the run before it starts.
struct Stop {
    report: Report,
    exit: Exit,
}

impl Stop {
    fn error(message: impl Into<String>) -> Stop {
        Stop {
            report: Report::error(message.into()),
            exit: Exit::Error,
        }
    }

    fn usage(message: impl Into<String>) -> Stop {
        Stop {
            report: Report::error(message.into()),
            exit: Exit::Usage,
        }
    }

    fn note(mut self, note: impl Into<String>) -> Stop {
        self.report = self.report.with_note(note.into());
        self
    }
}

fn corpus_dir(args: &ConformanceArgs) -> PathBuf {
    if let Some(dir) = &args.corpus {
        return dir.clone();
    }
    let built_in = corpus::corpus_dir();
    if built_in.is_dir() {
        built_in
    } else {
        PathBuf::from("conformance/corpus")
    }
}

/// SHA-256 of a file, in hex.
fn sha256_file(path: &Path) -> String {
    use sha2::Digest as _;
    match std::fs::read(path) {
        Ok(bytes) => {
            let digest = sha2::Sha256::digest(&bytes);
            digest.iter().fold(String::new(), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
        }
        Err(_) => String::new(),
    }
}

fn environment(
    args: &ConformanceArgs,
    spec: &BackendSpec,
    identity: Option<&Identity>,
) -> Environment {
    let plugin = match (spec, identity.and_then(|i| i.plugin.as_ref())) {
        (BackendSpec::Plugin { path, .. }, info) => Some(PluginIdentity {
            name: info.map_or_else(|| args.backend.clone(), |i| i.name.clone()),
            version: info.map(|i| i.plugin_version.clone()).unwrap_or_default(),
            file: path.display().to_string(),
            sha256: sha256_file(path),
        }),
        (BackendSpec::Reference | BackendSpec::Sim { .. }, _) => None,
    };
    let device = identity.and_then(|i| i.device.as_ref().ok());
    Environment {
        tilec_version: env!("CARGO_PKG_VERSION").to_string(),
        commit: option_env!("TILEC_COMMIT").map(str::to_string),
        abi_version: ABI_VERSION.to_string(),
        ir_format: TILE_IR_FORMAT.to_string(),
        backend: args.backend.clone(),
        plugin,
        target: identity
            .map(|i| i.target.arch.clone())
            .or_else(|| args.target.clone()),
        device: device.map(|d| d.name.clone()),
        driver: device.map(|d| d.driver.clone()),
    }
}

/// The backend named by `--backend` when it is `ref` or a plugin.
fn backend_spec(args: &ConformanceArgs, plugins: &Plugins) -> Result<BackendSpec, Stop> {
    Ok(match plugins.backend(&args.backend) {
        Ok(Backend::Ref) => {
            if let Some(t) = &args.target
                && t != tilec_conformance::backend::REFERENCE
            {
                return Err(Stop::error(format!(
                    "the reference backend has one target, `ref`, not `{t}`"
                )));
            }
            BackendSpec::Reference
        }
        Ok(Backend::Plugin(p)) => BackendSpec::Plugin {
            path: p.path.clone(),
            target: args.target.clone(),
        },
        Err(report) => {
            return Err(Stop {
                report,
                exit: Exit::Error,
            });
        }
    })
}

fn conformance(args: &ConformanceArgs) -> Result<Exit, Stop> {
    if args.mode == ConformanceMode::Certify {
        if args.filter.is_some() || args.repro.is_some() {
            return Err(Stop::usage(
                "`--mode certify` runs every test: it takes neither `--filter` nor `--repro`",
            ));
        }
        if args.report.is_none() {
            return Err(Stop::usage(
                "`--mode certify` needs `--report DIR`: a certification is its reports",
            ));
        }
    }
    if args.timeout == 0 {
        return Err(Stop::usage(
            "`--timeout 0` gives no test any time: the limit is in whole seconds, at least 1",
        ));
    }
    if args.timeout > MAX_TIMEOUT_S {
        return Err(Stop::usage(format!(
            "`--timeout {}` is longer than the longest limit, {MAX_TIMEOUT_S} s (a day)",
            args.timeout
        )));
    }
    if args.jobs == Some(0) {
        return Err(Stop::usage(
            "`-j 0` runs no worker: give at least 1 (default: the number of CPUs)",
        ));
    }
    if let Some(dir) = &args.report {
        report::check_report_dir(dir).map_err(|e| {
            Stop::error(format!(
                "cannot write reports in {}: {}",
                dir.display(),
                io_reason(&e)
            ))
            .note("checked before the run, so that its results are not lost; choose another `--report DIR`")
        })?;
    }
    let sim = args.backend == crate::backends::SIM;
    if let Some(kind) = &args.emit
        && (sim || args.backend == crate::backends::BUILTIN)
    {
        return Err(Stop::usage(format!(
            "`--emit {kind}` chooses what a plugin produces; the built-in backend `{}` has one artifact",
            args.backend
        )));
    }
    // Only the plugin tested is loaded: libraries that declare another
    // backend name in their file are skipped unloaded.
    let plugins = if sim || args.backend == crate::backends::BUILTIN {
        Plugins::load(&args.plugins.paths, false)
    } else {
        Plugins::load_for(&args.plugins.paths, &args.backend)
    };
    if let Some(failure) = plugins.explicit_failures().into_iter().next() {
        return Err(Stop {
            report: failure,
            exit: Exit::Error,
        });
    }
    let spec = if sim {
        let target =
            crate::backends::sim_target(args.target.as_deref()).map_err(|report| Stop {
                report,
                exit: Exit::Error,
            })?;
        BackendSpec::Sim {
            target: target.name,
        }
    } else {
        backend_spec(args, &plugins)?
    };
    let corpus = corpus_dir(args);
    let cases = corpus::load(&corpus).map_err(|e| {
        Stop::error(format!("cannot load the conformance corpus: {e}")).note(
            "`--corpus DIR` names the corpus folder (`conformance/corpus` in the tilec sources)",
        )
    })?;
    let program = std::env::current_exe().map_err(|e| {
        Stop::error(format!(
            "cannot find the tilec executable: {}",
            io_reason(&e)
        ))
    })?;
    let cmd = WorkerCommand {
        program,
        args: vec!["conformance-worker".into()],
    };
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let jobs = match args.jobs {
        Some(j) if j > cpus => {
            eprintln!(
                "note: `-j {j}` is more than the {cpus} CPUs here; running {cpus} workers at once"
            );
            cpus
        }
        Some(j) => j,
        None => cpus,
    };
    let settings = Settings {
        backend: spec.clone(),
        corpus,
        timeout: Duration::from_secs(args.timeout),
        jobs: jobs.max(1),
        fast_math: false,
        emit: args.emit.clone().unwrap_or_default(),
        extra: {
            let mut options = tilec_plugin_api::CompileOptions::default();
            super::compile::set_fp_contract(&mut options, args.fp_contract);
            options.extra
        },
    };
    let started = Instant::now();
    let is_plugin = matches!(spec, BackendSpec::Plugin { .. });

    let identity = match supervisor::probe(&cmd, &settings) {
        Ok(identity) => identity,
        Err(e) => return finish_unloadable(args, &spec, &e),
    };
    let selection = Selection {
        max_level: Some(args.level.and_then(Level::from_index).unwrap_or(Level::L4)),
        filter: args.repro.clone().or_else(|| args.filter.clone()),
    };
    let device = identity.device.clone().map(|_| ());
    let plan = plan::plan(&cases, &identity.target, is_plugin, device, &selection)
        .map_err(|e| Stop::error(format!("cannot plan the run: {e}")))?;
    if let Some(id) = &args.repro
        && plan.tests.is_empty()
        && !(is_plugin && id == LOAD_ID)
    {
        return Err(no_such_test(id, &cases, is_plugin));
    }
    let load_selected = selection
        .filter
        .as_deref()
        .is_none_or(|f| plan::glob_match(f, LOAD_ID));
    if plan.tests.is_empty() && !(is_plugin && load_selected) {
        let why = match &selection.filter {
            Some(f) => format!("no test id matches `--filter {f}`"),
            None => format!(
                "the corpus in {} gives no test up to the level asked",
                settings.corpus.display()
            ),
        };
        return Err(Stop::error(format!("the run would execute no test: {why}"))
            .note("a run that tests nothing proves nothing, so it is an error; ids look like `tilec.l2.gemm.nt.f16_f32.m257n129k77`"));
    }

    eprintln!("{}", header(&identity, &plan.tests, &settings));
    let bar = progress_bar(plan.tests.len());
    let mut records = supervisor::run(&cmd, &settings, &plan.tests, |r| {
        if let Some(bar) = &bar {
            bar.set_message(r.id.clone());
            bar.inc(1);
            if !r.outcome.is_conformant() {
                bar.println(format!("{:<14}{}", r.outcome.name(), r.id));
            }
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if is_plugin && load_selected {
        records.insert(0, load_record(&identity));
    }

    let mut summary = Summary::from_records(
        &records,
        environment(args, &spec, Some(&identity)),
        plan.not_run.clone(),
    );
    summary.mode = match args.mode {
        ConformanceMode::Dev => "dev",
        ConformanceMode::Certify => "certify",
    }
    .to_string();
    summary.filter = selection.filter.clone();

    if let Some(id) = &args.repro {
        print_stdout(&repro_text(id, &records, &plan.tests, &cases));
    } else {
        print_stdout(&report::terminal_table(&summary, &records));
        print_stdout(&format!(
            "{} tests in {:.1} s; seeds derive from test ids (`--repro ID` replays one)\n",
            records.len(),
            started.elapsed().as_secs_f64()
        ));
    }
    if let Some(dir) = &args.report {
        write_reports(dir, &summary, &records)?;
        print_stdout(&format!("reports written to {}\n", dir.display()));
    }
    Ok(if records.iter().all(|r| r.outcome.is_conformant()) {
        Exit::Success
    } else {
        Exit::Failure
    })
}

/// The record of the load check of a plugin that loaded.
fn load_record(identity: &Identity) -> TestRecord {
    let info = identity.plugin.as_ref();
    TestRecord {
        id: LOAD_ID.to_string(),
        level: Level::L0,
        outcome: Outcome::Pass,
        duration_ms: 0.0,
        seed: corpus::seed_for(LOAD_ID),
        max_abs_err: None,
        max_ulp_err: None,
        message: format!(
            "loaded {} {} (plugin ABI {})",
            identity.backend,
            info.map(|i| i.plugin_version.as_str()).unwrap_or("?"),
            identity.abi.as_deref().unwrap_or("?")
        ),
    }
}

/// A backend that does not even load: one L0 record says why.
fn finish_unloadable(
    args: &ConformanceArgs,
    spec: &BackendSpec,
    error: &ProbeError,
) -> Result<Exit, Stop> {
    if let ProbeError::Spawn { .. } = error {
        return Err(Stop::error(error.to_string()));
    }
    let records = vec![TestRecord {
        id: LOAD_ID.to_string(),
        level: Level::L0,
        outcome: error.outcome(),
        duration_ms: 0.0,
        seed: corpus::seed_for(LOAD_ID),
        max_abs_err: None,
        max_ulp_err: None,
        message: error.to_string(),
    }];
    let not_run = Level::ALL[1..]
        .iter()
        .map(|&l| (l, "the backend did not load".to_string()))
        .collect();
    let summary = Summary::from_records(&records, environment(args, spec, None), not_run);
    print_stdout(&report::terminal_table(&summary, &records));
    if let Some(dir) = &args.report {
        write_reports(dir, &summary, &records)?;
    }
    Ok(Exit::Failure)
}

fn write_reports(dir: &Path, summary: &Summary, records: &[TestRecord]) -> Result<(), Stop> {
    let fail = |what: &str, e: std::io::Error| {
        Stop::error(format!(
            "cannot write {what} in {}: {}",
            dir.display(),
            io_reason(&e)
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| fail("the report folder", e))?;
    report::write_results_jsonl(&dir.join("results.jsonl"), records)
        .map_err(|e| fail("results.jsonl", e))?;
    report::write_summary_json(&dir.join("summary.json"), summary)
        .map_err(|e| fail("summary.json", e))?;
    report::write_junit_xml(&dir.join("junit.xml"), records, SUITE)
        .map_err(|e| fail("junit.xml", e))?;
    Ok(())
}

fn header(identity: &Identity, tests: &[PlannedTest], settings: &Settings) -> String {
    let plugin = identity
        .plugin
        .as_ref()
        .map(|p| format!(" {} ({})", p.plugin_version, p.vendor))
        .unwrap_or_default();
    let device = match &identity.device {
        Ok(d) => format!("device {} ({})", d.name, d.driver),
        Err(why) => format!("no device: {why}"),
    };
    let not_supported = tests.iter().filter(|t| t.not_supported.is_some()).count();
    let emit = if settings.emit.is_empty() {
        String::new()
    } else {
        format!(", emit {}", settings.emit)
    };
    format!(
        "conformance: backend {}{plugin}, target {}{emit}, {device}\n\
         {} tests ({not_supported} not supported by the target's claims), {} worker(s), {} s per test",
        identity.backend,
        identity.target.arch,
        tests.len(),
        settings.jobs,
        settings.timeout.as_secs()
    )
}

/// A progress bar on standard error when it is a terminal.
fn progress_bar(len: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {wide_msg}")
    {
        bar.set_style(style);
    }
    Some(bar)
}

/// Everything about one test, for `--repro`.
fn repro_text(id: &str, records: &[TestRecord], tests: &[PlannedTest], cases: &[Case]) -> String {
    let mut out = String::new();
    let Some(r) = records.iter().find(|r| r.id == id) else {
        return format!("no record for `{id}`\n");
    };
    let test = tests.iter().find(|t| t.id == id);
    let _ = writeln!(out, "test     {}", r.id);
    let _ = writeln!(out, "level    L{}", r.level as u8);
    let _ = writeln!(
        out,
        "seed     {} (0x{:016x}; FNV-1a of the id)",
        r.seed, r.seed
    );
    if let Some(case) = test
        .and_then(|t| t.case.as_ref())
        .and_then(|c| cases.iter().find(|k| &k.id == c))
    {
        let _ = writeln!(out, "file     {}", case.file.display());
        if let Some(k) = &case.kernel {
            let _ = writeln!(out, "kernel   {k}");
        }
        for (name, value) in &case.defines {
            let _ = writeln!(out, "define   {name}={value}");
        }
        let _ = writeln!(out, "class    {:?}", case.class);
        if !case.needs.is_empty() {
            let _ = writeln!(out, "needs    {}", case.needs.join(", "));
        }
    }
    let _ = writeln!(out, "outcome  {}", r.outcome.name());
    if let Some(e) = r.max_abs_err {
        let _ = writeln!(out, "max abs  {e:e}");
    }
    if let Some(e) = r.max_ulp_err {
        let _ = writeln!(out, "max ulp  {e}");
    }
    let _ = writeln!(out, "time     {:.1} ms", r.duration_ms);
    if !r.message.is_empty() {
        let _ = writeln!(out, "message  {}", r.message);
    }
    out
}

/// `--repro` with an id no test has.
fn no_such_test(id: &str, cases: &[Case], is_plugin: bool) -> Stop {
    let mut known: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    known.extend(
        cases
            .iter()
            .filter(|c| c.level >= Level::L2 && c.expect_error.is_none())
            .map(plan::compile_id),
    );
    if is_plugin {
        known.extend(plan::AbiCheck::ALL.iter().map(|c| c.id().to_string()));
    }
    let prefix_len = |k: &String| {
        k.chars()
            .zip(id.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    known.sort_by_key(|k| std::cmp::Reverse(prefix_len(k)));
    let mut stop = Stop::error(format!("no test has the id `{id}`"));
    if let Some(best) = known.first()
        && prefix_len(best) > "tilec.".len()
    {
        stop = stop.note(format!("the closest id is `{best}`"));
    }
    stop.note("ids look like `tilec.l2.gemm.nt.f16_f32.m257n129k77`; a report's results.jsonl lists every id of a run")
}
