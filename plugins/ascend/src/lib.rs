//! `tilec-backend-ascend`: the backend plugin for Huawei Ascend NPUs
//! (910B, Atlas A2 AI cores).
//!
//! `compile` takes Tile IR at the tile level and writes an AscendC source
//! file ([`emit`]): one `extern "C" __global__ __aicore__` kernel per
//! `T.Kernel`, its tiling structure and host launch stub. The target is a
//! tile-engine description ([`targets`]); placement, capacities and the
//! flags between pipes are read from it.
//!
//! `runtime` runs kernels on the **CPU execution model** ([`runtime`]): the
//! emitted source is compiled with the system C++ compiler against
//! `cpu/ascendc_cpu.h`, a header implementing the AscendC calls the
//! emitter uses with their documented semantics and the target's limits
//! checked (capacities, alignment, bounds, pipe synchronisation). The one
//! device it reports says so in its name, which is what conformance
//! reports show.
//!
//! With CANN's `ccec` or `bisheng` on `PATH` (or named by
//! [`toolchain::CCEC_VAR`]), every compile also builds the emitted source
//! for the AI core ([`toolchain`]); without it that check is skipped.

pub mod emit;
pub mod runtime;
pub mod targets;
pub mod toolchain;

use tilec_core::ir;
use tilec_core::target::TargetDescription;
use tilec_plugin_api::simt::{check_dtypes, refusal};
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode,
    KernelMetadata, PluginError, PluginInfo, RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT,
    Version,
};

/// The plugin's name, as `--backend` selects it.
pub const NAME: &str = "ascend";

/// The `emit` values `compile` accepts.
pub const EMITS: [&str; 1] = ["ascendc"];

/// The backend.
#[derive(Debug)]
pub struct Ascend;

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
            "emits AscendC for Ascend 910B AI cores (cube via L1/L0A/L0B/L0C, vector unit on UB)"
                .to_string(),
            "runs on a CPU execution model of the AscendC API built with the system C++ compiler"
                .to_string(),
        ],
    }
}

/// What `compile` produced; the tests use it directly.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub source: String,
    pub kernels: Vec<KernelMetadata>,
}

/// Verifies `module` and writes its AscendC source for `target`.
pub fn compile_module(
    module: &ir::Module,
    target: &TargetDescription,
) -> Result<Compiled, PluginError> {
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
    check_dtypes(module, target)?;
    let engine = targets::Engine::of(target)?;
    let mut source = emit::header(target);
    let mut kernels = Vec::new();
    for f in &module.functions {
        let emitted = emit::emit_function(f, &engine, &mut source)
            .map_err(|r| refusal(r.code, &f.name, r.span, r.message))?;
        kernels.extend(emitted.into_iter().map(|(meta, _)| meta));
    }
    Ok(Compiled { source, kernels })
}

fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
    let target = targets::describe(&request.target)?;
    let emit = request.options.emit.as_str();
    if !emit.is_empty() && !EMITS.contains(&emit) {
        return Err(PluginError::new(
            ErrorCode::BadRequest,
            format!(
                "the ascend backend cannot emit `{emit}` (it emits: {})",
                EMITS.join(", ")
            ),
        ));
    }
    let compiled = compile_module(&request.ir.module, &target)?;
    if let Some(tool) = toolchain::find() {
        toolchain::check(&tool, &compiled.source, &target)
            .map_err(|e| PluginError::new(ErrorCode::Internal, e.to_string()))?;
    }
    let name = match request.ir.module.functions.first() {
        Some(f) => format!("{}.ascendc.cpp", f.name),
        None => "module.ascendc.cpp".to_string(),
    };
    Ok(CompileResult {
        artifacts: vec![Artifact {
            name,
            kind: ArtifactKind::Text,
            bytes: compiled.source.into_bytes(),
        }],
        kernels: compiled.kernels,
        diagnostics: Vec::new(),
    })
}

impl BackendPlugin for Ascend {
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

tilec_plugin_api::export_backend!(Ascend);
