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

use tilec_plugin_api::simt::{check_dtypes, kernel_metadata, lower_functions_with, lower_options};

use tilec_core::ir;
use tilec_core::target::TargetDescription;
use tilec_core::thread;
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode,
    KernelMetadata, PluginError, PluginInfo, RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT,
    Version,
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
        ir_formats: (Version::new(0, 4), TILE_IR_FORMAT),
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
    check_dtypes(module, &target)?;
    let lowered = lower_functions_with(module, &target, &lower_options(&request.options)?)?;
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
    options.contract = request
        .options
        .fp_contract()
        .map_err(|e| PluginError::new(ErrorCode::BadRequest, e))?;
    let extra = &request.options.extra;
    if let (Some(name), Some(text)) = (
        extra.get(tilec_plugin_api::SOURCE_NAME_OPTION),
        extra.get(tilec_plugin_api::SOURCE_TEXT_OPTION),
    ) {
        options.source = Some(ptx::SourceText::new(name.clone(), text.clone()));
    }
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

impl BackendPlugin for Cuda {
    const NAME: &'static str = NAME;

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
