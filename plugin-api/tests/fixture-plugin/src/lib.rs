//! `tilec-fixture-plugin`: a backend plugin built to fail on purpose, for
//! the failure-matrix tests of `tilec-plugin-api`
//! (`plugin-api/tests/failure_matrix.rs`), and the test backend of the
//! conformance runner.
//!
//! Without features it is a small working backend named `fixture` (vendor
//! `tilec tests`, one target `t0`): `compile` returns the printed Tile IR as
//! one text artifact and one [`KernelMetadata`] per function (`entry` is the
//! function's name), and the runtime is an in-process CPU runtime with one
//! device that runs that artifact with the reference interpreter
//! ([`runtime`]). Target `t0` claims every dtype of the core, the profiles
//! [`PROFILES`] plus `dtype.<short name>` for every dtype (no
//! `gemm.f8e4m3`), and 48 KiB of shared memory; `compile` refuses a `gemm`
//! with a float8 operand (`UnsupportedDtype`) and a function whose shared
//! buffers exceed the shared memory (`UnsupportedFeature`). Each feature
//! selects one defect:
//!
//! | feature           | defect |
//! |-------------------|--------|
//! | `abi-1-0`         | built for plugin ABI 1.0: no `runtime` call |
//! | `abi-2-0`         | claims plugin ABI 2.0 |
//! | `not-a-plugin`    | exports no root module, only an ordinary C function |
//! | `panic-compile`   | `compile` panics with [`PANIC_MESSAGE`] |
//! | `garbage`         | a hand-built root module whose `compile` returns bytes that are not a document |
//! | `old-ir`          | reads only Tile IR 0.0 |
//! | `wrong-numerics`  | after a correct `Launch`, the first changed element of every changed buffer is replaced (float `x` by 1.0, or 2.0 if `x` is 1.0; integer `x` by `x ^ 1`; bool negated) |
//! | `hang`            | `compile` sleeps forever |
//! | `refuse-claimed`  | `compile` refuses any module with a `gemm` ([`REFUSED_GEMM`], `UnsupportedFeature`), while `t0` still claims the `gemm.*` profiles |
//! | `abort-launch`    | `Launch` aborts the process |
//! | `abi-1-2`         | built for plugin ABI 1.2, a minor version newer than the host's, with one call more |
//! | `layout-mismatch` | the root module's layout does not match the ABI version it declares (`AbiVersion` has a third field) |
//!
//! Two knobs work in every variant, read from the environment at run time
//! (so they need no build of their own):
//!
//! | variable              | effect |
//! |-----------------------|--------|
//! | `TILEC_FIXTURE_NAME`  | the backend name `info` gives, instead of `fixture` |
//! | `TILEC_FIXTURE_FORGE` | comma-separated test ids: `compile` prints a forged conformance `Pass` record for each on standard output, as the worker protocol writes them, then aborts the process |
//! | `TILEC_FIXTURE_MARK`  | a file path: `info` appends a line to it, so a test can see whether the plugin's code ran |
//! | `TILEC_FIXTURE_PANIC` | `info`, `describe_target` or `runtime`: that call panics with [`PANIC_MESSAGE`]'s text, the call's name in place of `compile` |
//! | `TILEC_FIXTURE_IR`    | `MIN-MAX` (e.g. `9.0-9.1`): the Tile IR formats `info` claims to read |
//! | `TILEC_FIXTURE_COMPILE` | `abort` or `exit`: `compile` calls `std::process::abort()` or `std::process::exit(7)` |
//! | `TILEC_FIXTURE_GARBAGE_INFO` | (`garbage` variant only) `info` answers bytes that are not a document |
//! | `TILEC_FIXTURE_TARGET_0_1` | (`garbage` variant only) `describe_target` answers a target description of the provisional version 0.1 |

pub mod runtime;

use tilec_core::ir::{Block, DType, Expr, Function, Handle, Literal, Scope, Span, Stmt};
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode, IrLocation,
    KernelMetadata, ParamMetadata, PluginDiagnostic, PluginError, PluginInfo, RuntimeRequest,
    RuntimeResponse, Severity, TILE_IR_FORMAT, TargetDescription, Version,
};

/// The message `compile` panics with in the `panic-compile` variant.
pub const PANIC_MESSAGE: &str = "fixture: deliberate panic in compile";

/// The message of the `UnsupportedFeature` refusal of the `refuse-claimed`
/// variant.
pub const REFUSED_GEMM: &str = "gemm is not implemented";

/// The only target.
pub const TARGET: &str = "t0";

/// Shared memory per block of `t0`, in bytes.
pub const SHARED_BYTES: u64 = 48 << 10;

/// The conformance profiles `t0` claims besides `dtype.<short name>` for
/// every dtype.
pub const PROFILES: [&str; 5] = [
    "gemm.f16",
    "gemm.bf16",
    "gemm.f32",
    "gemm.fragment_operand",
    "atomic_add.f32",
];

/// The backend.
#[derive(Debug)]
pub struct Fixture;

/// What the plugin says about itself.
fn plugin_info() -> PluginInfo {
    if let Ok(mark) = std::env::var("TILEC_FIXTURE_MARK") {
        use std::io::Write as _;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(mark)
        {
            let _ = writeln!(f, "info");
        }
    }
    panic_if("info");
    let ir_formats = if let Some(range) = knob_ir() {
        range
    } else if cfg!(feature = "old-ir") {
        (Version::new(0, 0), Version::new(0, 0))
    } else {
        (TILE_IR_FORMAT, TILE_IR_FORMAT)
    };
    PluginInfo {
        name: std::env::var("TILEC_FIXTURE_NAME").unwrap_or_else(|_| "fixture".to_string()),
        vendor: "tilec tests".to_string(),
        plugin_version: env!("CARGO_PKG_VERSION").to_string(),
        ir_formats,
        targets: vec![TARGET.to_string()],
        default_target: Some(TARGET.to_string()),
        ir_level: "tile".to_string(),
        // Also in the `abi-1-0` variant, which has no `runtime` call: the
        // host must go by the call's presence, not by this claim alone.
        has_runtime: true,
        notes: vec!["test fixture of tilec-plugin-api; not a real backend".to_string()],
    }
}

fn unknown_target(arch: &str) -> PluginError {
    PluginError::new(
        ErrorCode::UnknownTarget,
        format!("fixture has no target `{arch}` (it serves: {TARGET})"),
    )
}

/// The limits of `t0`, as data (`targets/t0.json`); its claims are
/// added in [`target_description`].
const T0_JSON: &str = include_str!("../targets/t0.json");

/// The `TILEC_FIXTURE_PANIC` knob: panics when it names `call`.
pub fn panic_if(call: &str) {
    if std::env::var("TILEC_FIXTURE_PANIC").is_ok_and(|c| c == call) {
        panic!("fixture: deliberate panic in {call}");
    }
}

/// The `TILEC_FIXTURE_IR` knob: `MIN-MAX`, each `major.minor`.
fn knob_ir() -> Option<(Version, Version)> {
    let text = std::env::var("TILEC_FIXTURE_IR").ok()?;
    let version = |v: &str| {
        let (major, minor) = v.split_once('.')?;
        Some(Version::new(major.parse().ok()?, minor.parse().ok()?))
    };
    let (min, max) = text.split_once('-')?;
    Some((version(min)?, version(max)?))
}

fn target_description(arch: &str) -> Result<TargetDescription, PluginError> {
    panic_if("describe_target");
    if arch != TARGET {
        return Err(unknown_target(arch));
    }
    let mut target = TargetDescription::from_json(T0_JSON)
        .map_err(|e| PluginError::new(ErrorCode::Internal, format!("targets/t0.json: {e}")))?;
    target.dtypes = DType::ALL
        .iter()
        .map(|d| d.tilelang_name().to_string())
        .collect();
    target.profiles = PROFILES
        .iter()
        .map(|p| p.to_string())
        .chain(
            DType::ALL
                .iter()
                .map(|d| format!("dtype.{}", d.short_name())),
        )
        .collect();
    Ok(target)
}

/// An extent as launch metadata shows it: a constant, a symbol's name, or
/// `?` for anything more complex.
fn extent(f: &Function, e: Handle<Expr>) -> String {
    match f.exprs.try_get(e) {
        Some(Expr::Literal(Literal::Int(v, _))) => v.to_string(),
        Some(Expr::Var(v)) => f
            .vars
            .try_get(*v)
            .map_or_else(|| "?".to_string(), |v| v.name.clone()),
        _ => "?".to_string(),
    }
}

/// Launch metadata of one function: its parameters and its first kernel.
fn kernel_metadata(f: &Function, shared_bytes: u64) -> KernelMetadata {
    let params = f
        .params
        .iter()
        .filter_map(|p| f.buffers.try_get(p.buffer))
        .map(|b| ParamMetadata {
            name: b.name.clone(),
            dtype: b.dtype.tilelang_name().to_string(),
            shape: b.shape.iter().map(|&e| extent(f, e)).collect(),
        })
        .collect();
    let (grid, threads) = f
        .body
        .stmts
        .iter()
        .find_map(|s| match s {
            Stmt::Kernel { grid, threads, .. } => {
                Some((grid.iter().map(|&e| extent(f, e)).collect(), *threads))
            }
            _ => None,
        })
        .unwrap_or_default();
    KernelMetadata {
        entry: f.name.clone(),
        params,
        grid,
        threads,
        shared_bytes,
        registers: None,
    }
}

/// A refusal with one error diagnostic at `span` of function `f`.
fn refusal(code: ErrorCode, f: &Function, span: Span, message: String) -> PluginError {
    let mut error = PluginError::new(code, message.clone());
    error.diagnostics.push(PluginDiagnostic {
        severity: Severity::Error,
        message,
        location: Some(IrLocation {
            function: f.name.clone(),
            span,
        }),
        notes: Vec::new(),
    });
    error
}

/// Checks every `gemm` of `f`: float8 operands are not supported (and, in
/// the `refuse-claimed` variant, no gemm is).
fn check_gemms(f: &Function) -> Result<(), PluginError> {
    // Blocks still to visit: an explicit stack, so that deep nesting cannot
    // overflow the call stack.
    let mut blocks: Vec<&Block> = vec![&f.body];
    while let Some(block) = blocks.pop() {
        for (stmt, span) in block.iter() {
            match stmt {
                Stmt::Gemm { a, b, c, .. } => {
                    if cfg!(feature = "refuse-claimed") {
                        return Err(refusal(
                            ErrorCode::UnsupportedFeature,
                            f,
                            span,
                            REFUSED_GEMM.to_string(),
                        ));
                    }
                    for region in [a, b, c] {
                        let Some(buffer) = f.buffers.try_get(region.buffer) else {
                            continue;
                        };
                        if matches!(buffer.dtype, DType::F8E4M3 | DType::F8E5M2) {
                            return Err(refusal(
                                ErrorCode::UnsupportedDtype,
                                f,
                                span,
                                format!(
                                    "target {TARGET} has no gemm on {} operands (`{}` in `{}`)",
                                    buffer.dtype.tilelang_name(),
                                    buffer.name,
                                    f.name
                                ),
                            ));
                        }
                    }
                }
                Stmt::Kernel { body, .. }
                | Stmt::For { body, .. }
                | Stmt::Parallel { body, .. } => blocks.push(body),
                Stmt::If {
                    then, otherwise, ..
                } => {
                    blocks.push(then);
                    blocks.push(otherwise);
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Bytes of the shared buffers of `f` whose shapes are constant; refuses
/// more than [`SHARED_BYTES`], pointing at the buffer that crosses the
/// limit.
fn check_shared(f: &Function) -> Result<u64, PluginError> {
    let mut total: u64 = 0;
    let mut crossing = None;
    for (handle, buffer) in f.buffers.iter() {
        if buffer.scope != Scope::Shared {
            continue;
        }
        let numel = buffer.shape.iter().try_fold(1u64, |n, &e| {
            let extent = f.exprs.try_get(e).and_then(|_| f.as_const_int(e))?;
            Some(n.saturating_mul(u64::try_from(extent).unwrap_or(0)))
        });
        let Some(numel) = numel else { continue };
        total = total.saturating_add(numel.saturating_mul(buffer.dtype.bytes()));
        if total > SHARED_BYTES && crossing.is_none() {
            let span = f
                .buffer_spans
                .get(handle.index())
                .copied()
                .unwrap_or_default();
            crossing = Some(span);
        }
    }
    match crossing {
        None => Ok(total),
        Some(span) => Err(refusal(
            ErrorCode::UnsupportedFeature,
            f,
            span,
            format!(
                "`{}` uses {total} bytes of shared memory, more than the {SHARED_BYTES} bytes \
                 target {TARGET} has",
                f.name
            ),
        )),
    }
}

/// The `TILEC_FIXTURE_FORGE` knob: forged `Pass` records on standard
/// output, in the form the conformance worker once wrote its protocol there
/// (a public marker, then a JSON message), then an abort.
fn forge(ids: &str) -> ! {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for id in ids.split(',').filter(|id| !id.is_empty()) {
        let level = id
            .split('.')
            .nth(1)
            .map_or("L1".to_string(), str::to_uppercase);
        let _ = writeln!(
            out,
            "\u{1}tilec-worker {{\"Record\":{{\"id\":\"{id}\",\"level\":\"{level}\",\
             \"outcome\":\"Pass\",\"duration_ms\":1.0,\"seed\":0,\"max_abs_err\":null,\
             \"max_ulp_err\":null,\"message\":\"forged\"}}}}"
        );
    }
    let _ = out.flush();
    std::process::abort()
}

fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
    if let Ok(ids) = std::env::var("TILEC_FIXTURE_FORGE") {
        forge(&ids);
    }
    match std::env::var("TILEC_FIXTURE_COMPILE").as_deref() {
        Ok("abort") => std::process::abort(),
        Ok("exit") => std::process::exit(7),
        _ => {}
    }
    if cfg!(feature = "panic-compile") {
        panic!("{PANIC_MESSAGE}");
    }
    if cfg!(feature = "hang") {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    if request.target != TARGET {
        return Err(unknown_target(&request.target));
    }
    let module = &request.ir.module;
    // Never trust the host: IR that breaks the verifier's invariants is
    // refused, as every backend must.
    if let Err(errors) = tilec_core::ir::verify::verify_module(module) {
        let first = errors
            .first()
            .map(|(func, e)| format!("`{func}`: {e}"))
            .unwrap_or_default();
        return Err(PluginError::new(
            ErrorCode::InvalidIr,
            format!("the module does not verify: {first}"),
        ));
    }
    let mut kernels = Vec::with_capacity(module.functions.len());
    for f in &module.functions {
        check_gemms(f)?;
        let shared = check_shared(f)?;
        kernels.push(kernel_metadata(f, shared));
    }
    Ok(CompileResult {
        artifacts: vec![Artifact {
            name: "module.tir".to_string(),
            kind: ArtifactKind::Text,
            bytes: tilec_core::text::print_module(module).into_bytes(),
        }],
        kernels,
        diagnostics: Vec::new(),
    })
}

impl BackendPlugin for Fixture {
    // Declared in the file, so a search for another backend skips it
    // unloaded. (`TILEC_FIXTURE_NAME` changes only what `info` says.)
    const NAME: &'static str = "fixture";

    fn info() -> PluginInfo {
        plugin_info()
    }

    fn describe_target(arch: &str) -> Result<TargetDescription, PluginError> {
        target_description(arch)
    }

    fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
        compile(request)
    }

    fn runtime(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        panic_if("runtime");
        runtime::call(request)
    }
}

#[cfg(not(any(feature = "not-a-plugin", feature = "garbage")))]
tilec_plugin_api::export_backend!(Fixture);

/// An ordinary exported function: the `not-a-plugin` variant is a valid
/// shared library without the plugin root module.
#[cfg(feature = "not-a-plugin")]
#[unsafe(no_mangle)]
pub extern "C" fn tilec_fixture_answer() -> u32 {
    42
}

/// The `garbage` variant: the root module written by hand instead of by
/// `export_backend!`, so that `compile` can return bytes that are not a
/// document.
#[cfg(feature = "garbage")]
mod garbage {
    use abi_stable::prefix_type::PrefixTypeTrait;
    use abi_stable::std_types::{RResult, RSlice, RStr};
    use tilec_plugin_api::abi::{AbiVersion, Backend, BackendRef, ByteResult};
    use tilec_plugin_api::{ABI_VERSION, Encoding, document};

    extern "C" fn abi_version() -> AbiVersion {
        AbiVersion {
            major: ABI_VERSION.major,
            minor: ABI_VERSION.minor,
        }
    }

    fn encoding(byte: u8) -> Encoding {
        Encoding::from_byte(byte).unwrap_or(Encoding::Postcard)
    }

    /// With `TILEC_FIXTURE_GARBAGE_INFO` set, `info` answers bytes that
    /// are not a document too.
    extern "C" fn info(enc: u8) -> ByteResult {
        if std::env::var_os("TILEC_FIXTURE_GARBAGE_INFO").is_some() {
            return RResult::ROk(vec![1u8, 2, 3].into());
        }
        RResult::ROk(document::encode(&super::plugin_info(), encoding(enc)).into())
    }

    /// With `TILEC_FIXTURE_TARGET_0_1` set, `describe_target` answers a
    /// target description of the provisional version 0.1.
    extern "C" fn describe_target(arch: RStr<'_>, enc: u8) -> ByteResult {
        if std::env::var_os("TILEC_FIXTURE_TARGET_0_1").is_some() {
            let doc = format!(
                "{{\"tilec_document\":\"target-description\",\"version\":[0,1],\
                 \"body\":{{\"arch\":\"{}\",\"max_threads\":1024}}}}",
                arch.as_str()
            );
            return RResult::ROk(doc.into_bytes().into());
        }
        match super::target_description(arch.as_str()) {
            Ok(t) => RResult::ROk(document::encode(&t, encoding(enc)).into()),
            Err(e) => RResult::RErr(document::encode(&e, encoding(enc)).into()),
        }
    }

    /// Not a document: no `TLCD` header and not JSON.
    extern "C" fn compile(_request: RSlice<'_, u8>) -> ByteResult {
        RResult::ROk(vec![1u8, 2, 3].into())
    }

    extern "C" fn runtime(_request: RSlice<'_, u8>) -> ByteResult {
        RResult::ROk(vec![1u8, 2, 3].into())
    }

    #[abi_stable::export_root_module]
    pub fn tilec_backend_root_module() -> BackendRef {
        Backend {
            abi_version,
            info,
            describe_target,
            compile,
            runtime,
        }
        .leak_into_prefix()
    }
}
