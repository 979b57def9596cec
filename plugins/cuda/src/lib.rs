//! `tilec-backend-cuda`: the backend plugin for NVIDIA GPUs.
//!
//! `compile` takes Tile IR at the tile level, lowers it with the core's
//! SIMT lowering ([`tilec_core::lower::to_thread`]) for the chosen target
//! description ([`targets`]) and emits PTX text ([`ptx`]) — no nvcc, no
//! NVRTC: the CUDA driver's JIT assembles it when the module is loaded.
//! `runtime` drives the GPU through the driver API ([`runtime`]), loaded at
//! run time so that the plugin also loads, compiles and answers "no CUDA
//! driver found" on machines without one.
//!
//! Compile options: `emit` is `ptx` (the default), `cubin` (assembled by
//! `ptxas`, see [`ptxas`]) or `thread-ir` (the lowered thread-level IR, for
//! inspection); `fast_math` allows the approximate transcendental
//! instructions. With `TILEC_PTXAS` set, every compile also assembles its
//! PTX with that `ptxas` and fails on what ptxas rejects: how CI validates
//! the PTX of every conformance kernel without a GPU.
//!
//! Launch metadata ([`KernelMetadata`]) lists the PTX entry's parameters
//! in order: global buffers (dtype and shape) and integer scalars, the
//! kernel's symbolic sizes (empty shape); a host passes a buffer handle for
//! the first and the value for the second. Grid extents are texts in the
//! language of [`tilec_plugin_api::extent`].

pub mod ptx;
pub mod ptxas;
pub mod runtime;
pub mod targets;

use tilec_core::ir::{self, BinaryOp, Span};
use tilec_core::target::TargetDescription;
use tilec_core::thread::{self, Dim, ExprKind, Param};
use tilec_core::{ir::Literal, lower};
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode, IrLocation,
    KernelMetadata, ParamMetadata, PluginDiagnostic, PluginError, PluginInfo, RuntimeRequest,
    RuntimeResponse, Severity, TILE_IR_FORMAT, Version,
};

/// The plugin's name, as `--backend` selects it.
pub const NAME: &str = "cuda";

/// The backend.
#[derive(Debug)]
pub struct Cuda;

fn plugin_info() -> PluginInfo {
    PluginInfo {
        name: NAME.to_string(),
        vendor: "tilec".to_string(),
        plugin_version: env!("CARGO_PKG_VERSION").to_string(),
        ir_formats: (Version::new(0, 2), TILE_IR_FORMAT),
        targets: targets::TARGETS.iter().map(|t| t.to_string()).collect(),
        default_target: Some(targets::DEFAULT_TARGET.to_string()),
        ir_level: "tile".to_string(),
        has_runtime: true,
        notes: vec![
            "emits PTX; the CUDA driver's JIT assembles it at load time".to_string(),
            "mma.sync, cp.async and vector moves; no TMA or wgmma yet".to_string(),
        ],
    }
}

/// A refusal with an error diagnostic at `span` of `function`.
fn refusal(code: ErrorCode, function: &str, span: Span, message: String) -> PluginError {
    let mut error = PluginError::new(code, message.clone());
    error.diagnostics.push(PluginDiagnostic {
        severity: Severity::Error,
        message,
        location: Some(IrLocation {
            function: function.to_string(),
            span,
        }),
        notes: Vec::new(),
    });
    error
}

fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
    let target = targets::describe(&request.target)?;
    let module = &request.ir.module;
    // Never trust the host: IR that breaks the verifier's invariants is
    // refused before anything relies on them.
    if let Err(errors) = ir::verify::verify_module(module) {
        let first = errors
            .first()
            .map(|(func, e)| format!("`{func}`: {e}"))
            .unwrap_or_default();
        return Err(PluginError::new(
            ErrorCode::InvalidIr,
            format!("the module does not verify: {first}"),
        ));
    }
    let lowered = lower_functions(module, &target)?;
    let kernels = lowered
        .kernels
        .iter()
        .map(kernel_metadata)
        .collect::<Result<Vec<_>, _>>()?;
    let emit = request.options.emit.as_str();
    if emit == "thread-ir" {
        return Ok(CompileResult {
            artifacts: vec![Artifact {
                name: "module.thr".to_string(),
                kind: ArtifactKind::Text,
                bytes: thread::print_module(&lowered).into_bytes(),
            }],
            kernels,
            diagnostics: Vec::new(),
        });
    }
    if !matches!(emit, "" | "ptx" | "cubin") {
        return Err(PluginError::new(
            ErrorCode::BadRequest,
            format!("the cuda backend cannot emit `{emit}` (it emits: ptx, cubin, thread-ir)"),
        ));
    }
    let mut options = ptx::PtxOptions::default();
    options.fast_math = request.options.fast_math;
    let emitted = ptx::emit_module(&lowered, &target, &options)
        .map_err(|e| PluginError::new(ErrorCode::UnsupportedFeature, e.to_string()))?;
    let kernels = with_shared_bytes(kernels, &emitted.kernels);
    let entries: Vec<&str> = kernels.iter().map(|k| k.entry.as_str()).collect();
    let assembler = if emit == "cubin" {
        Some(ptxas::find().ok_or_else(|| {
            PluginError::new(
                ErrorCode::Unimplemented,
                ptxas::PtxasError::NotFound.to_string(),
            )
        })?)
    } else {
        ptxas::from_env()
    };
    let cubin = match assembler {
        Some(path) => Some(
            ptxas::assemble(&path, &emitted.text, &target.arch, &entries)
                .map_err(|e| PluginError::new(ErrorCode::Internal, e.to_string()))?,
        ),
        None => None,
    };
    let artifact = match cubin {
        Some(bytes) if emit == "cubin" => Artifact {
            name: "module.cubin".to_string(),
            kind: ArtifactKind::Binary,
            bytes,
        },
        _ => Artifact {
            name: "module.ptx".to_string(),
            kind: ArtifactKind::Text,
            bytes: emitted.text.into_bytes(),
        },
    };
    Ok(CompileResult {
        artifacts: vec![artifact],
        kernels,
        diagnostics: Vec::new(),
    })
}

/// Lowers each function on its own, so that a refusal names its function.
fn lower_functions(
    module: &ir::Module,
    target: &TargetDescription,
) -> Result<thread::Module, PluginError> {
    let mut out = thread::Module::default();
    for f in &module.functions {
        let single = ir::Module {
            functions: vec![f.clone()],
        };
        let lowered = lower::to_thread(&single, target).map_err(|e| {
            let code = match e {
                lower::LowerError::Unsupported { .. } => ErrorCode::UnsupportedFeature,
                lower::LowerError::Malformed { .. } => ErrorCode::InvalidIr,
                lower::LowerError::Internal { .. } => ErrorCode::Internal,
            };
            refusal(code, &f.name, e.span(), e.to_string())
        })?;
        out.kernels.extend(lowered.kernels);
    }
    Ok(out)
}

/// The shared bytes of each kernel as the PTX lays them out.
fn with_shared_bytes(
    mut kernels: Vec<KernelMetadata>,
    ptx: &[ptx::PtxKernel],
) -> Vec<KernelMetadata> {
    for k in &mut kernels {
        if let Some(p) = ptx.iter().find(|p| p.name == k.entry) {
            k.shared_bytes = p.shared_bytes;
        }
    }
    kernels
}

fn kernel_metadata(k: &thread::Kernel) -> Result<KernelMetadata, PluginError> {
    let params = k
        .params
        .iter()
        .map(|p| match p {
            Param::Global(g) => ParamMetadata {
                name: g.name.clone(),
                dtype: g.dtype.tilelang_name().to_string(),
                shape: g
                    .shape
                    .iter()
                    .map(|d| match d {
                        Dim::Const(v) => v.to_string(),
                        Dim::Param(id) => k.param_name(*id).to_string(),
                    })
                    .collect(),
            },
            Param::Scalar { name, dtype } => ParamMetadata {
                name: name.clone(),
                dtype: dtype.tilelang_name().to_string(),
                shape: Vec::new(),
            },
        })
        .collect();
    let grid = k
        .grid
        .iter()
        .map(|e| {
            extent_text(k, e).ok_or_else(|| {
                PluginError::new(
                    ErrorCode::UnsupportedFeature,
                    format!(
                        "kernel `{}`: a grid extent is not an integer expression over its sizes",
                        k.name
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shared_bytes = k.shared.iter().map(|s| s.len * s.dtype.bytes()).sum();
    Ok(KernelMetadata {
        entry: k.name.clone(),
        params,
        grid,
        threads: k.threads,
        shared_bytes,
        registers: None,
    })
}

/// A grid extent in the language of [`tilec_plugin_api::extent`].
fn extent_text(k: &thread::Kernel, e: &thread::Expr) -> Option<String> {
    Some(match &e.kind {
        ExprKind::Literal(Literal::Int(v, _)) => v.to_string(),
        ExprKind::Param(id) => k.param_name(*id).to_string(),
        ExprKind::Cast(inner) => extent_text(k, inner)?,
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (extent_text(k, a)?, extent_text(k, b)?);
            match op {
                BinaryOp::Min => format!("min({a}, {b})"),
                BinaryOp::Max => format!("max({a}, {b})"),
                _ => {
                    let sym = match op {
                        BinaryOp::Add => "+",
                        BinaryOp::Sub => "-",
                        BinaryOp::Mul => "*",
                        BinaryOp::Div => "/",
                        BinaryOp::FloorDiv => "//",
                        BinaryOp::FloorMod => "%",
                        _ => return None,
                    };
                    format!("({a} {sym} {b})")
                }
            }
        }
        _ => return None,
    })
}

impl BackendPlugin for Cuda {
    fn info() -> PluginInfo {
        plugin_info()
    }

    fn describe_target(arch: &str) -> Result<TargetDescription, PluginError> {
        targets::describe(arch)
    }

    fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
        compile(request)
    }

    fn runtime(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        runtime::call(request)
    }
}

tilec_plugin_api::export_backend!(Cuda);
