//! `tilec-fixture-plugin`: a backend plugin built to fail on purpose, for
//! the failure-matrix tests of `tilec-plugin-api`
//! (`plugin-api/tests/failure_matrix.rs`).
//!
//! Without features it is a small working backend named `fixture` (vendor
//! `tilec tests`, one target `t0`): `compile` returns the printed Tile IR as
//! one text artifact and one [`KernelMetadata`] per function, and the
//! runtime lists no devices (and answers `NoDevice` to anything else). Each
//! feature selects one defect:
//!
//! | feature         | defect |
//! |-----------------|--------|
//! | `abi-1-0`       | built for plugin ABI 1.0: no `runtime` call |
//! | `abi-2-0`       | claims plugin ABI 2.0 |
//! | `not-a-plugin`  | exports no root module, only an ordinary C function |
//! | `panic-compile` | `compile` panics with [`PANIC_MESSAGE`] |
//! | `garbage`       | a hand-built root module whose `compile` returns bytes that are not a document |
//! | `old-ir`        | reads only Tile IR 0.0 |

use tilec_core::ir::{Expr, Function, Handle, Literal, Stmt};
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode,
    ExecutionModel, KernelMetadata, MemorySpace, ParamMetadata, PluginError, PluginInfo,
    RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT, TargetDescription, Version,
};

/// The message `compile` panics with in the `panic-compile` variant.
pub const PANIC_MESSAGE: &str = "fixture: deliberate panic in compile";

/// The only target.
const TARGET: &str = "t0";

/// The backend.
#[derive(Debug)]
pub struct Fixture;

/// What the plugin says about itself.
fn plugin_info() -> PluginInfo {
    let ir_formats = if cfg!(feature = "old-ir") {
        (Version::new(0, 0), Version::new(0, 0))
    } else {
        (TILE_IR_FORMAT, TILE_IR_FORMAT)
    };
    PluginInfo {
        name: "fixture".to_string(),
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

fn target_description(arch: &str) -> Result<TargetDescription, PluginError> {
    if arch != TARGET {
        return Err(unknown_target(arch));
    }
    Ok(TargetDescription {
        arch: TARGET.to_string(),
        execution: ExecutionModel::Simt { width: 32 },
        max_threads_per_block: 1024,
        memory: vec![
            MemorySpace {
                name: "global".to_string(),
                capacity_bytes: 1 << 30,
                alignment_bytes: 256,
            },
            MemorySpace {
                name: "shared".to_string(),
                capacity_bytes: 48 << 10,
                alignment_bytes: 16,
            },
        ],
        dtypes: vec!["float16".to_string(), "float32".to_string()],
        profiles: Vec::new(),
        sources: vec!["plugin-api/tests/fixture-plugin".to_string()],
    })
}

/// An extent as launch metadata shows it: a constant, a symbol's name, or
/// `?` for anything more complex.
fn extent(f: &Function, e: Handle<Expr>) -> String {
    match &f.exprs[e] {
        Expr::Literal(Literal::Int(v, _)) => v.to_string(),
        Expr::Var(v) => f.vars[*v].name.clone(),
        _ => "?".to_string(),
    }
}

/// Launch metadata of one function: its parameters and its first kernel.
fn kernel_metadata(f: &Function) -> KernelMetadata {
    let params = f
        .params
        .iter()
        .map(|p| {
            let b = &f.buffers[p.buffer];
            ParamMetadata {
                name: b.name.clone(),
                dtype: b.dtype.tilelang_name().to_string(),
                shape: b.shape.iter().map(|&e| extent(f, e)).collect(),
            }
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
        shared_bytes: 0,
        registers: None,
    }
}

fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
    if cfg!(feature = "panic-compile") {
        panic!("{PANIC_MESSAGE}");
    }
    if request.target != TARGET {
        return Err(unknown_target(&request.target));
    }
    let module = &request.ir.module;
    Ok(CompileResult {
        artifacts: vec![Artifact {
            name: "module.tir".to_string(),
            kind: ArtifactKind::Text,
            bytes: tilec_core::text::print_module(module).into_bytes(),
        }],
        kernels: module.functions.iter().map(kernel_metadata).collect(),
        diagnostics: Vec::new(),
    })
}

impl BackendPlugin for Fixture {
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
        match request {
            RuntimeRequest::Devices => Ok(RuntimeResponse::Devices(Vec::new())),
            _ => Err(PluginError::new(
                ErrorCode::NoDevice,
                "fixture has no devices",
            )),
        }
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

    extern "C" fn info(enc: u8) -> ByteResult {
        RResult::ROk(document::encode(&super::plugin_info(), encoding(enc)).into())
    }

    extern "C" fn describe_target(arch: RStr<'_>, enc: u8) -> ByteResult {
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
