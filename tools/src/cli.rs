//! Command-line syntax: every subcommand and flag of `tilec`, declared with
//! clap's derive API. The doc comments here are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Text shown after `tilec --help`: the exit-code contract scripts rely on.
/// (A macro, so that `compile`'s help can append it to its own section.)
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
    0  success
    1  the input could not be read, compiled or verified, or the command
       could not be carried out (bad -D value, missing symbolic size,
       unavailable backend, unwritable output)
    2  usage error: unknown subcommand or flag, malformed argument
    3  run-time failure: the kernel failed while running, or `run --check`
       found a mismatch or has no reference to compare with
  101  internal error: tilec crashed (a bug; please report it)"
    };
}

const EXIT_CODES: &str = exit_codes!();

/// `tilec compile --help`: the codes of plugin diagnostics, then the exit
/// codes.
const COMPILE_AFTER_HELP: &str = concat!(
    "\
Diagnostics from backend plugins:
    P0001  error: the backend plugin refused the kernel (a dtype or feature
           the target lacks, a limit of the target, a bug it reports); shown
           at the source line of the statement it names, when it names one
    P0002  warning from the backend plugin, shown the same way

",
    exit_codes!()
);

/// tilec: a tile-level kernel compiler for TileLang kernels.
///
/// Compiles TileLang-syntax Python files to Tile IR without Python, checks
/// them, runs them on the reference interpreter, and compiles them with
/// backend plugins (`tilec plugins` lists them).
#[derive(Debug, Parser)]
#[command(name = "tilec", version, after_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    /// When to colour diagnostics: `auto` colours them when standard error
    /// is a terminal and NO_COLOR is unset.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

/// When to use ANSI colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a kernel file and report every diagnostic, without output.
    ///
    /// Runs the front end and the Tile IR verifier. Exits 0 when there is no
    /// error (warnings are printed but do not fail the check).
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),

    /// Compile a kernel file and write the result: Tile IR text with the
    /// built-in backend `ref`, or what a backend plugin produces.
    #[command(after_help = COMPILE_AFTER_HELP)]
    Compile(CompileArgs),

    /// Compile a kernel and run it on random inputs.
    ///
    /// Allocates one tensor per kernel parameter, fills inputs from a seeded
    /// deterministic generator (floats: N(0,1) rounded to the dtype; signed
    /// integers: uniform in [-8, 8]; unsigned: [0, 16); bool: 0 or 1),
    /// poisons outputs (NaN, or a fixed bit pattern for integers), runs the
    /// kernel and prints a summary of every parameter.
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),

    /// Time a kernel on a device backend (a plugin with a runtime).
    ///
    /// Compiles for `--target`, fills the parameters as `run` does, and
    /// launches the kernel `--warmup` times, then `--repeat` times, each
    /// timed with device events. Prints the median, minimum and maximum per
    /// launch, TFLOP/s (2·M·N·K per `T.gemm` executed, or `--flops`) and
    /// GB/s (every parameter's bytes once).
    #[command(after_help = EXIT_CODES)]
    Bench(BenchArgs),

    /// Prove a kernel's safety obligations with Z3, or show the values that
    /// break one.
    ///
    /// Obligations: scalar loads and stores inside their buffers, tile-op
    /// regions inside their buffers (advisory for global tensors, whose
    /// out-of-bounds elements read as zero and are not written), index
    /// arithmetic without overflow or division by zero, no two iterations
    /// of a `T.Parallel` nest storing to one element, no two blocks writing
    /// one element, matrix-atom fragments covering their tiles once,
    /// hand-written XOR swizzles permuting their tiles, pipelined stage
    /// buffers neither overwritten while read nor read before their copy
    /// is published, the block's shared memory, thread count and
    /// (estimated) registers within the target's limits. Each is printed as `proved`,
    /// `refuted` (with a counterexample: symbolic sizes, block and thread
    /// indices, loop variables, and the source line), `guarded` (an
    /// advisory one refuted) or `unknown` (the solver gave up). Exits 0
    /// when every required obligation is proved, 1 otherwise.
    /// `docs/verify.md` describes the obligations and their encoding.
    #[command(after_help = EXIT_CODES)]
    Verify(VerifyArgs),

    /// List the backends: the built-in `ref`, then every plugin found.
    ///
    /// For each plugin: its file, name, vendor, versions (plugin, plugin
    /// ABI, Tile IR formats it reads), targets (the default marked), IR
    /// level and runtime, with the devices the runtime reports. Then every
    /// library that failed to load and why, and every place searched, in
    /// order: `--plugin` files, the entries of TILEC_PLUGIN_PATH (files or
    /// folders, separated like PATH), the folder `plugins` next to tilec,
    /// `<prefix>/lib/tilec/plugins`, and tilec's own folder for
    /// `libtilec_backend_*` libraries (the workspace's plugins after
    /// `cargo build`). Exits 1 when a `--plugin` file could not be loaded.
    #[command(after_help = EXIT_CODES)]
    Plugins(PluginsArgs),

    /// Run the conformance suite against a backend.
    ///
    /// Levels: L0 ABI (a plugin loads, describes its targets, refuses
    /// malformed input with structured errors, survives concurrent
    /// compiles; malformed IR and front-end errors are refused), L1 compile
    /// (every corpus kernel compiles, recompiles byte-identically and
    /// passes structural checks, or is refused as a negative case must
    /// be; code objects among its artifacts, as `--emit` asks for them,
    /// are read and checked against the target's limits, scratch and
    /// spills reported as QualityWarning), L2 execute and L3 advanced (numerics against the reference
    /// interpreter by tolerance class; two runs bit-identical), L4
    /// performance. A test whose capability the target does not claim is
    /// NotSupported; levels that need a device are reported as not run
    /// when there is none. Tests run in worker processes with a time
    /// limit, so a crash or a hang is recorded as Crash or Timeout and the
    /// run goes on. Seeds derive from test ids: `--repro ID` replays one
    /// test exactly. `docs/conformance.md` describes the suite.
    #[command(after_help = CONFORMANCE_AFTER_HELP)]
    Conformance(ConformanceArgs),

    /// The worker process of `tilec conformance` (internal).
    #[command(hide = true)]
    ConformanceWorker,

    /// Show what a GPU code object holds: its target and, per kernel, the
    /// resources it uses.
    ///
    /// AMDGPU code objects (`.hsaco`, `--emit hsaco`): the processor and
    /// the xnack/sramecc settings, the code object version, each kernel's
    /// descriptor and metadata (SGPRs, VGPRs, AGPRs, LDS, scratch,
    /// wavefront size, spills) and an occupancy estimate in waves per SIMD
    /// from the target description's register file and LDS size (found in
    /// a plugin serving the target, else among the built-in descriptions).
    /// NVIDIA cubins: per kernel the registers, static shared memory and
    /// local memory (stack frame). Anything else is reported as not a GPU
    /// code object (exit 1). `docs/inspect.md` describes the fields.
    #[command(after_help = EXIT_CODES)]
    Inspect(InspectArgs),
}

/// `tilec conformance --help`: its own exit codes.
const CONFORMANCE_AFTER_HELP: &str = "\
Exit codes:
    0  every test ran to a conformant outcome (Pass, NotSupported,
       QualityWarning)
    1  the run could not be carried out (unknown backend, unreadable
       corpus, unwritable report folder)
    2  usage error
    3  some test ended in Fail, Crash, Timeout or InternalError";

/// `--fp-contract`: whether a plugin may fuse a float multiply into the add
/// that consumes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum FpContract {
    /// Every `+ − ×` rounded on its own, as the reference interpreter
    /// computes them.
    #[default]
    Off,
    /// Products may be fused into the adds that consume them (one rounding
    /// where the reference has two), as nvcc and clang do by default for
    /// GPU code.
    Fast,
}

impl FpContract {
    /// The value of `tilec.fp-contract` (`FP_CONTRACT_OPTION`) that asks a
    /// plugin for this.
    pub fn option_value(self) -> &'static str {
        match self {
            FpContract::Off => "off",
            FpContract::Fast => "fast",
        }
    }
}

/// How a conformance run is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConformanceMode {
    /// A development run: filters allowed; never certifies.
    Dev,
    /// A certification run: every test of levels 0..=--level, no filter,
    /// reports required.
    Certify,
}

#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// The backend to test: `ref` (built in) or a plugin's name.
    #[arg(long, value_name = "NAME")]
    pub backend: String,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// The target to test (default: the plugin's default target).
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    /// Run levels 0 to N (default 4: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=4))]
    pub level: Option<u8>,

    /// Only tests whose id matches GLOB (`*` matches any run of characters,
    /// `?` one), e.g. `'tilec.l2.gemm.*'`.
    #[arg(long, value_name = "GLOB")]
    pub filter: Option<String>,

    /// Write results.jsonl, summary.json and junit.xml into DIR (created
    /// if missing).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,

    /// `dev` or `certify`.
    #[arg(long, value_enum, default_value_t = ConformanceMode::Dev)]
    pub mode: ConformanceMode,

    /// Compile every test with multiply-add contraction allowed (`fast`)
    /// or not (`off`, the default), as `tilec run --fp-contract` does; the
    /// tolerances are the same (`docs/conformance.md`).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FpContract::Off)]
    pub fp_contract: FpContract,

    /// Run the one test ID and print everything about it (seed, case,
    /// kernel call, full message).
    #[arg(long, value_name = "ID", conflicts_with = "filter")]
    pub repro: Option<String>,

    /// Time limit of one test, in seconds (1 to 86400).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,

    /// Worker processes run at once (default and most: the number of
    /// CPUs; a larger N is capped, with a note).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// The corpus folder (default: the corpus shipped with tilec).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,

    /// Compile every test with the compile option `emit` set to KIND, the
    /// artifact a plugin produces (e.g. `hsaco` for rocm, `cubin` for
    /// cuda; default: the plugin's own, often text). L1 reads every code
    /// object it gets as `tilec inspect` does and checks it against the
    /// target: a kernel missing, another wavefront width, or more LDS,
    /// shared memory or registers than the target has is a Fail; scratch,
    /// spilled registers or local memory is a QualityWarning. Plugins
    /// only.
    #[arg(long, value_name = "KIND")]
    pub emit: Option<String>,
}

/// Where backend plugins come from, besides the search path.
#[derive(Debug, Args)]
pub struct PluginArgs {
    /// Load the backend plugin PATH (a shared library), ahead of those in
    /// TILEC_PLUGIN_PATH and next to tilec; it wins over a discovered
    /// plugin with the same backend name. May be repeated.
    #[arg(long = "plugin", value_name = "PATH", action = clap::ArgAction::Append)]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PluginsArgs {
    #[command(flatten)]
    pub plugins: PluginArgs,

    /// Print one JSON object on standard output: {plugins: [{name,
    /// builtin, file, explicit, vendor, plugin_version, abi, ir_formats,
    /// targets, default_target, ir_level, runtime, devices, devices_error,
    /// shadowed, notes}], failures: [{path, error}], search: [{source,
    /// path, kind, libraries}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The code object to read (an AMDGPU code object or a cubin).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// Print one JSON object on standard output: {file, kind: "amdgpu" |
    /// "cubin", ...} with the fields `docs/inspect.md` lists.
    #[arg(long)]
    pub json: bool,
}

/// What to compile: the file and how to instantiate its kernel.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// The TileLang kernel file (`.py`), or a Tile IR text file (`.tir`, as
    /// `tilec compile` writes), which skips the front end.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The builder call that produces the kernel, evaluated in the file's
    /// namespace, e.g. `matmul(1024, 1024, 1024, 128, 128, 32)`. Default:
    /// the file's single builder (or `prim_func`), called with its defaults.
    #[arg(long, value_name = "CALL")]
    pub kernel: Option<String>,

    /// Bind NAME to VALUE: a `T.const` name, a `T.dynamic` size or a
    /// keyword parameter of the builder. VALUE is a Python literal (`1024`,
    /// `True`, `"float16"`). `run` also takes the values of symbolic sizes
    /// from these. May be repeated; a later binding of a name wins.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define, action = clap::ArgAction::Append)]
    pub define: Vec<(String, String)>,

    /// The most bytes the file's build-time Python values (lists, tuples,
    /// dicts, strings) may take in total, garbage included; past it the
    /// build stops with T0109.
    #[arg(long, value_name = "BYTES", default_value_t = tilec_core::front::py::DEFAULT_MAX_BYTES)]
    pub max_build_memory: u64,

    /// The most steps build-time Python may take (statements, expressions,
    /// loop iterations, and every element a list copy or dict look-up
    /// touches); past it the build stops with T0109.
    #[arg(long, value_name = "N", default_value_t = tilec_core::front::py::DEFAULT_MAX_STEPS)]
    pub max_build_steps: u64,
}

impl SourceArgs {
    /// The `-D` bindings by name, later ones replacing earlier ones.
    pub fn defines(&self) -> BTreeMap<String, String> {
        self.define.iter().cloned().collect()
    }

    /// The budgets of build-time evaluation.
    pub fn build_limits(&self) -> tilec_core::front::py::BuildLimits {
        tilec_core::front::py::BuildLimits {
            max_steps: self.max_build_steps,
            max_bytes: self.max_build_memory,
        }
    }
}

/// Parses one `-D NAME=VALUE`.
fn parse_define(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "expected NAME=VALUE, found `{text}` (write e.g. `-D {text}=1024`)"
        ));
    };
    let name = name.trim();
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic());
    if !starts_well || !chars.all(|c| c == '_' || c.is_alphanumeric()) {
        return Err(format!("`{name}` is not a Python identifier"));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// `--remap-path-prefix FROM=TO`, split at the last `=` as rustc does.
fn parse_remap(text: &str) -> Result<(PathBuf, PathBuf), String> {
    match text.rsplit_once('=') {
        Some((from, to)) if !from.is_empty() => Ok((PathBuf::from(from), PathBuf::from(to))),
        _ => Err(format!(
            "expected FROM=TO, found `{text}` (write e.g. `--remap-path-prefix $PWD=.`)"
        )),
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// The target the file is checked for: a built-in description (sm_80,
    /// sm_90a, gfx942, apple) or a plugin's target name. The file's
    /// build-time device queries (`torch.cuda.get_device_capability()`,
    /// `driver.get_num_sms()`) are answered from it. Default: sm_80, as
    /// for `compile`.
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    /// Print the result as one JSON object on standard output:
    /// {ok, diagnostics: [{severity, code, message, file, line, col,
    /// end_line, end_col, label, notes, secondary}]}. Lines and columns are
    /// 1-based; `end_col` is exclusive.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    /// The built-in target description whose limits (shared memory,
    /// threads per block) are checked: sm_80, sm_90a, gfx942, apple.
    /// Default: sm_80.
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    /// Width in bits of the signed integers generated code indexes buffers
    /// with: every global buffer's element count must fit.
    #[arg(long, value_name = "BITS", default_value_t = 32, value_parser = clap::value_parser!(u32).range(8..=64))]
    pub index_bits: u32,

    /// Time the solver may spend on one obligation, in milliseconds, before
    /// it is reported `unknown`.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    pub timeout_ms: u32,

    /// Print one JSON object on standard output: {ok, file, target,
    /// seconds, functions: [{name, ok, proved, refuted, unknown,
    /// obligations: [{kind, subject, required, kernel, status, line, col,
    /// goal, counterexample: {values, shown, approximate}, reason}]}],
    /// diagnostics: [...]}.
    #[arg(long)]
    pub json: bool,
}

/// What `compile --emit` names for the built-in backend.
pub const EMIT_TILE_IR: &str = "tile-ir";

#[derive(Debug, Args)]
pub struct CompileArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    /// What to produce. The built-in backend `ref` writes `tile-ir`, the
    /// tile-level IR in its textual form (the default). The built-in
    /// backend `sim` writes `thread-ir` (the default: the thread-level IR of
    /// the baseline lowering, `docs/lowering.md`) or `tile-ir`. A plugin backend
    /// takes the names it documents (`ptx`, `listing`, ...) and uses its
    /// own default when none is given.
    #[arg(long, value_name = "KIND")]
    pub emit: Option<String>,

    /// Backend that compiles the kernel: `ref` (built in: Tile IR), `sim`
    /// (built in: thread-level IR for a built-in target) or the name of a
    /// backend plugin (see `tilec plugins`).
    #[arg(long, value_name = "NAME", default_value = "ref")]
    pub backend: String,

    /// The target: for a plugin backend, one of its targets (default: the
    /// plugin's default target); with `ref`, a built-in target description
    /// (sm_80, sm_90a, gfx942, apple) that `--passes` read (default: none);
    /// with `sim`, the built-in target to lower for (default: sm_80).
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// Where to write the output: a file, when there is one artifact; a
    /// folder (an existing one, a PATH ending in `/`, or any PATH when
    /// there are several artifacts) to write each artifact under its own
    /// name. Default (or `-`): text artifacts on standard output (binary
    /// ones need -o). In a folder, an artifact a plugin names `module.EXT`
    /// is written as `KERNEL.EXT`, after the (first) kernel. Files are
    /// written whole or not at all (a temporary file renamed into place).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Rewrite the source path that artifacts embed (PTX `.file`): a path
    /// under FROM is written under TO instead (repeatable; the last FROM
    /// that matches wins; FROM is taken relative to the working folder).
    /// Without a match, a source under the working folder is embedded
    /// relative to it, one outside it as its absolute path, so
    /// `examples/gemm.py` and `$PWD/examples/gemm.py` give the same bytes.
    #[arg(long = "remap-path-prefix", value_name = "FROM=TO", value_parser = parse_remap, action = clap::ArgAction::Append)]
    pub remap_path_prefix: Vec<(PathBuf, PathBuf)>,

    /// Print one JSON object on standard output: {ok, file, backend,
    /// target, artifacts: [{name, kind, bytes_len, path}], kernels:
    /// [{entry, params, grid, threads, shared_bytes, registers}],
    /// diagnostics: [...]}. Artifacts are written only with -o (`path` is
    /// null otherwise).
    #[arg(long)]
    pub json: bool,

    /// Run these passes on the Tile IR, in order, before the backend gets
    /// it: registered pass names separated by commas (`simplify`; a pass
    /// may appear more than once). Default: none. `docs/passes.md`
    /// describes every pass.
    #[arg(long, value_name = "LIST", value_parser = parse_pass_list)]
    pub passes: Option<PassList>,

    /// Print the IR to standard error before each run of PASS, under a
    /// header line `// ----- IR before PASS -----`. PASS must be in
    /// --passes. May be repeated.
    #[arg(long = "print-before", value_name = "PASS", value_parser = parse_pass_name, action = clap::ArgAction::Append)]
    pub print_before: Vec<&'static str>,

    /// Print the IR to standard error after each run of PASS, under a
    /// header line `// ----- IR after PASS -----`. PASS must be in
    /// --passes. May be repeated.
    #[arg(long = "print-after", value_name = "PASS", value_parser = parse_pass_name, action = clap::ArgAction::Append)]
    pub print_after: Vec<&'static str>,

    /// Print wall-clock times to standard error: a table of each pass of
    /// `--passes` (running it, and verifying the IR after it), then one of
    /// the phases of the compilation (front end, passes, `--verify`, and
    /// the backend: the lowering with `sim`, the plugin's whole compile
    /// with a plugin).
    #[arg(long)]
    pub time_passes: bool,

    /// Prove the kernel's safety obligations before the backend gets it
    /// (`tilec verify`, `docs/verify.md`), for `--target` when it is a
    /// built-in or plugin target, else sm_80. A refuted or undecided
    /// obligation is an error (exit 1); nothing is written. Accesses proved
    /// in bounds are lowered without bounds guards, with `--backend sim` and
    /// with plugins that lower with the core (they receive the proved
    /// sites as the `tilec.proved-sites` option).
    #[arg(long)]
    pub verify: bool,

    /// Allow approximate math in a plugin backend's code, as the kernel's
    /// `pass_configs={"tl.enable_fast_math": True}` does (and `tilec run`
    /// or `bench --fast-math`): approximate transcendentals and division,
    /// multiply-adds fused.
    #[arg(long)]
    pub fast_math: bool,

    /// Let a plugin backend fuse `f32` multiplies into the adds that
    /// consume them (`fast`: one rounding where the reference has two, as
    /// nvcc and clang do by default for GPU code; `--fast-math` and
    /// `tl.enable_fast_math` imply it) or not (`off`, the default: every
    /// operation rounded as the reference interpreter rounds it). Passed
    /// to the plugin as the `tilec.fp-contract` option.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FpContract::Off)]
    pub fp_contract: FpContract,
}

/// The registered passes `--passes` names, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassList(pub Vec<&'static str>);

/// One registered pass name.
fn parse_pass_name(text: &str) -> Result<&'static str, String> {
    tilec_core::passes::registered_name(text.trim()).map_err(|e| e.to_string())
}

/// Comma-separated registered pass names; empty entries are ignored.
fn parse_pass_list(text: &str) -> Result<PassList, String> {
    text.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(parse_pass_name)
        .collect::<Result<Vec<_>, _>>()
        .map(PassList)
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    /// The device backend (a plugin with a runtime).
    #[arg(long, value_name = "NAME", default_value = "cuda")]
    pub backend: String,

    /// The plugin's target (default: the plugin's default target).
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// Untimed launches before timing.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub warmup: u32,

    /// Timed launches; the median is reported.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub repeat: u32,

    /// Seed of the input generator.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// Floating-point operations per launch, for TFLOP/s, instead of the
    /// count from the kernel's `T.gemm`s.
    #[arg(long, value_name = "N")]
    pub flops: Option<f64>,

    /// Allow approximate math, as the kernel's `tl.enable_fast_math` pass
    /// config does: approximate transcendentals and division, multiply-adds
    /// fused.
    #[arg(long)]
    pub fast_math: bool,

    /// Let a plugin backend fuse `f32` multiplies into the adds that
    /// consume them (`fast`: one rounding where the reference has two, as
    /// nvcc and clang do by default for GPU code; `--fast-math` and
    /// `tl.enable_fast_math` imply it) or not (`off`, the default: every
    /// operation rounded as the reference interpreter rounds it). Passed
    /// to the plugin as the `tilec.fp-contract` option.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FpContract::Off)]
    pub fp_contract: FpContract,

    /// Rotate through copies of the inputs until consecutive launches
    /// touch at least this many bytes, so that data left in the caches by
    /// one launch does not speed up the next; 0 measures with one set.
    /// The default exceeds the last-level cache of current GPUs.
    #[arg(long, value_name = "BYTES", default_value_t = 512 << 20)]
    pub rotate_bytes: u64,

    /// Print the result as one JSON object on standard output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    /// Backend that runs the kernel: `ref`, the reference interpreter;
    /// `sim`, the lowering to thread-level IR run thread by thread by the
    /// SIMT interpreter (which reports shared-memory races and other
    /// hazards, exit 3); a plugin with a runtime, such as `cuda`, which
    /// compiles for `--target` and runs on the first device (without a
    /// device the plugin says why, exit 1); or `auto`: the first plugin
    /// that reports a device, else `ref`.
    #[arg(long, value_name = "NAME", default_value = "ref")]
    pub backend: String,

    /// The target to lower for: with `--backend sim` a built-in description
    /// (sm_80, sm_90a, gfx942, apple; default sm_80); with a plugin one of
    /// its targets (default: the plugin's default target).
    #[arg(long, value_name = "ARCH")]
    pub target: Option<String>,

    #[command(flatten)]
    pub plugins: PluginArgs,

    /// Seed of the input generator; the same seed gives the same inputs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// Compare every parameter the kernel writes with an independent
    /// reference implementation of the example (chosen by the file's stem);
    /// exit 3 on a mismatch or when the file has no reference. With
    /// `--backend sim` or a plugin backend, compare every parameter instead
    /// with the reference interpreter's result on the same inputs (any
    /// file), within the dtype's tolerance (absolute and relative: float16
    /// 1e-2, bfloat16 2e-2, float32 1e-4, float64 1e-10; integers exact).
    #[arg(long)]
    pub check: bool,

    /// Allow approximate math on a plugin backend, as the kernel's
    /// `pass_configs={"tl.enable_fast_math": True}` does: approximate
    /// transcendentals and division, multiply-adds fused (`--check` then
    /// compares within the dtype's tolerance all the same).
    #[arg(long)]
    pub fast_math: bool,

    /// Let a plugin backend fuse `f32` multiplies into the adds that
    /// consume them (`fast`: one rounding where the reference has two, as
    /// nvcc and clang do by default for GPU code; `--fast-math` and
    /// `tl.enable_fast_math` imply it) or not (`off`, the default: every
    /// operation rounded as the reference interpreter rounds it). Passed
    /// to the plugin as the `tilec.fp-contract` option.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FpContract::Off)]
    pub fp_contract: FpContract,

    /// Write every parameter into DIR as NumPy `.npy` files: inputs before
    /// the run (`<name>.in.npy`), every parameter after it (`<name>.npy`),
    /// and `manifest.json` describing them. bfloat16 and fp8 are stored
    /// widened to float32.
    #[arg(long, value_name = "DIR")]
    pub dump: Option<PathBuf>,

    /// Print the summary (and check results) as one JSON object on standard
    /// output.
    #[arg(long)]
    pub json: bool,

    /// The most bytes the interpreters (`ref`, `sim`, and `ref` under
    /// `--check`) may use for the kernel's arguments and buffers (8 bytes
    /// an element; for `sim`, one block's registers and shared memory with
    /// their race records); past it the run is refused before allocating
    /// (T0500).
    #[arg(long, value_name = "BYTES", default_value_t = tilec_core::interp::DEFAULT_MEMORY_LIMIT)]
    pub max_interp_memory: u64,

    /// The most steps the interpreters may take over the whole run (every
    /// block of every kernel): for `ref` statements, loop iterations, blocks
    /// and tile-op elements (default 2^30); for `sim` statement executions
    /// times the block's threads (default 2^29). Either is well under a
    /// minute of work. A grid or fixed-count loops that surely pass it are
    /// refused before the first block (T0500).
    #[arg(long, value_name = "N")]
    pub max_interp_steps: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defines_parse() {
        assert_eq!(
            parse_define("M=1024"),
            Ok(("M".to_string(), "1024".to_string()))
        );
        assert_eq!(
            parse_define("dtype=\"a=b\""),
            Ok(("dtype".to_string(), "\"a=b\"".to_string()))
        );
        assert!(parse_define("M").is_err());
        assert!(parse_define("=3").is_err());
        assert!(parse_define("1x=3").is_err());
    }

    #[test]
    fn pass_lists_parse() {
        assert_eq!(
            parse_pass_list("simplify, simplify,"),
            Ok(PassList(vec!["simplify", "simplify"]))
        );
        assert_eq!(parse_pass_list(""), Ok(PassList(Vec::new())));
        let error = parse_pass_list("simplify,bogus").err().unwrap_or_default();
        assert!(error.contains("unknown pass `bogus`"), "{error}");
        assert!(error.contains("simplify"), "{error}");
    }
}
