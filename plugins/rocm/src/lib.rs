//! `tilec-backend-rocm`: the backend plugin for AMD GPUs (gfx90a and
//! gfx942, wave64).
//!
//! `compile` takes Tile IR at the tile level, lowers it with the core's
//! SIMT lowering ([`tilec_core::lower::to_thread`]) for the chosen target
//! description ([`targets`]), and translates the thread-level IR to AMDGPU
//! LLVM IR ([`emit`]). With LLVM 19 on the machine it also builds the code
//! object ([`toolchain`]: `opt`, `llc`, `ld.lld`). `runtime` drives the GPU
//! through HIP ([`runtime`]), loaded at run time so that the plugin also
//! loads, compiles and answers "no HIP runtime found" on machines without
//! ROCm.
//!
//! Compile options: `emit` is `llvm-ir` (the default: it needs nothing but
//! this plugin), `hsaco` (an ELF code object; fails with a message naming
//! the missing tool when LLVM is not installed) or `thread-ir` (the
//! lowered thread-level IR); `fast_math` lets transcendental functions use
//! approximate instructions.
//!
//! Launch metadata ([`KernelMetadata`]) lists the kernel's parameters in
//! order: global buffers (dtype and shape) and integer scalars, the
//! kernel's symbolic sizes (empty shape); grid extents are texts in the
//! language of [`tilec_plugin_api::extent`]. `shared_bytes` is the static
//! LDS of the kernel (declared in the code object; a launch asks for no
//! dynamic LDS); `registers` is the VGPR count when a code object was
//! built.
//!
//! Every code object is read back with `tilec-inspect` (the reader behind
//! `tilec inspect`) and checked against the target
//! ([`check_code_object`]); a kernel that uses scratch is reported as a
//! warning diagnostic of the compile result.

pub mod emit;
pub mod runtime;
pub mod targets;
pub mod toolchain;

use tilec_core::lower::LowerOptions;
use tilec_plugin_api::simt::{check_dtypes, kernel_metadata, lower_functions_with, lower_options};

use tilec_core::ir;
use tilec_core::target::{MemoryKind, TargetDescription};
use tilec_core::thread;
use tilec_inspect::CodeObject;
use tilec_inspect::amdgpu::AmdgpuKernel;
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode,
    KernelMetadata, PluginDiagnostic, PluginError, PluginInfo, RuntimeRequest, RuntimeResponse,
    Severity, TILE_IR_FORMAT, Version,
};

/// The plugin's name, as `--backend` selects it.
pub const NAME: &str = "rocm";

/// The `emit` values `compile` accepts.
pub const EMITS: [&str; 3] = ["llvm-ir", "hsaco", "thread-ir"];

/// With this variable set (and not `0`), every compile that emits LLVM IR
/// also builds the code object and checks it as `--emit hsaco` does: how CI
/// checks, without a GPU, that every conformance kernel assembles for every
/// target within its limits.
pub const VALIDATE_VAR: &str = "TILEC_ROCM_VALIDATE";

/// The backend.
#[derive(Debug)]
pub struct Rocm;

/// Builds the code object of `llvm_ir` with LLVM 19 and checks it
/// against the target ([`check_code_object`]): the object, and the
/// warnings for the compile result.
fn code_object(
    llvm_ir: &str,
    target: &TargetDescription,
    kernels: &mut [KernelMetadata],
) -> Result<(Vec<u8>, Vec<PluginDiagnostic>), PluginError> {
    let tools =
        toolchain::find().map_err(|e| PluginError::new(ErrorCode::Unimplemented, e.to_string()))?;
    let bytes = toolchain::build_code_object(&tools, llvm_ir, &target.arch)
        .map_err(|e| PluginError::new(ErrorCode::Internal, e.to_string()))?;
    let warnings = check_code_object(&bytes, target, kernels)?;
    Ok((bytes, warnings))
}

/// Checks a code object the plugin built for `target` and records each
/// kernel's VGPR count in `kernels`.
///
/// Every kernel of `kernels` must be described in the metadata note, run
/// in wavefronts of the target's width and use no more LDS than the target
/// has: a violation means the plugin built something the target cannot
/// run, an `Internal` error naming the kernel. Scratch (private segment
/// memory: spilled registers, or a private array indexed at run time) is
/// legal and only slow, so each kernel that uses it gives a warning with
/// its bytes per work-item instead.
pub fn check_code_object(
    bytes: &[u8],
    target: &TargetDescription,
    kernels: &mut [KernelMetadata],
) -> Result<Vec<PluginDiagnostic>, PluginError> {
    let internal = |message: String| PluginError::new(ErrorCode::Internal, message);
    let object = match tilec_inspect::inspect(bytes, None) {
        Ok(CodeObject::Amdgpu(object)) => object,
        Ok(CodeObject::Cubin(_)) => {
            return Err(internal(
                "LLVM built an NVIDIA cubin instead of an AMDGPU code object".into(),
            ));
        }
        Err(e) => {
            return Err(internal(format!(
                "the code object LLVM built is unreadable: {e}"
            )));
        }
    };
    let mut warnings = Vec::new();
    for k in kernels.iter_mut() {
        let Some(found) = object
            .kernels
            .iter()
            .find(|c| c.name == k.entry && c.metadata.is_some())
        else {
            return Err(internal(format!(
                "the code object has no metadata for kernel `{}`",
                k.entry
            )));
        };
        k.registers = found
            .metadata
            .as_ref()
            .and_then(|m| m.vgpr_count)
            .and_then(|v| u32::try_from(v).ok());
        if let Some(problem) = limit_violation(found, target) {
            return Err(internal(format!(
                "kernel `{}` on {}: {problem}",
                k.entry, target.arch
            )));
        }
        warnings.extend(scratch_warning(found, &target.arch));
    }
    Ok(warnings)
}

/// What in `kernel` the target cannot run: a wavefront of another width,
/// or more LDS than a workgroup can have.
fn limit_violation(kernel: &AmdgpuKernel, target: &TargetDescription) -> Option<String> {
    let width = target.simt_width().map(u64::from);
    let lds_limit = target
        .memory_of_kind(MemoryKind::Shared)
        .and_then(|m| m.capacity_bytes);
    if let (Some(wave), Some(width)) = (kernel.wavefront_size(), width)
        && wave != width
    {
        return Some(format!("wavefront size {wave}, the target's is {width}"));
    }
    if let (Some(lds), Some(limit)) = (kernel.lds_bytes(), lds_limit)
        && lds > limit
    {
        return Some(format!("{lds} bytes of LDS, the target has {limit}"));
    }
    None
}

/// The warning for a kernel that uses scratch, if it does.
fn scratch_warning(kernel: &AmdgpuKernel, arch: &str) -> Option<PluginDiagnostic> {
    let bytes = kernel.scratch_bytes().filter(|&b| b > 0)?;
    let spills = kernel.metadata.as_ref().map_or((0, 0), |m| {
        (
            m.vgpr_spill_count.unwrap_or(0),
            m.sgpr_spill_count.unwrap_or(0),
        )
    });
    let cause = match spills {
        (0, 0) => "a private array indexed at run time (no register was spilled)".to_string(),
        (vgprs, sgprs) => format!("{vgprs} VGPRs and {sgprs} SGPRs spilled"),
    };
    Some(PluginDiagnostic {
        severity: Severity::Warning,
        message: format!(
            "kernel `{}` uses {bytes} bytes of scratch per work-item on {arch}",
            kernel.name
        ),
        location: None,
        notes: vec![
            format!("scratch holds {cause}"),
            "scratch lives in device memory: the kernel is correct but slower; `tilec inspect` on the code object shows its registers".to_string(),
        ],
    })
}

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
            "emits AMDGPU LLVM IR; code objects with LLVM 19 (opt, llc, ld.lld)".to_string(),
            "MFMA 32x32x8 and 16x16x16, ds_bpermute shuffles; runtime through HIP".to_string(),
        ],
    }
}

/// What `compile` produced, before it becomes a [`CompileResult`]; the
/// tests use it directly.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub thread: thread::Module,
    pub llvm_ir: String,
    pub kernels: Vec<KernelMetadata>,
}

/// Verifies, lowers and translates `module` for `target`.
pub fn compile_module(
    module: &ir::Module,
    target: &TargetDescription,
    options: &emit::EmitOptions,
) -> Result<Compiled, PluginError> {
    compile_module_with(module, target, options, &LowerOptions::default())
}

/// [`compile_module`], with facts from the host for the lowering
/// (`tilec_plugin_api::simt::lower_options`).
pub fn compile_module_with(
    module: &ir::Module,
    target: &TargetDescription,
    options: &emit::EmitOptions,
    lower: &LowerOptions,
) -> Result<Compiled, PluginError> {
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
    check_dtypes(module, target)?;
    let lowered = lower_functions_with(module, target, lower)?;
    let emitted = translate(&lowered, target, options)?;
    let mut kernels = lowered
        .kernels
        .iter()
        .map(kernel_metadata)
        .collect::<Result<Vec<_>, _>>()?;
    for k in &mut kernels {
        if let Some(e) = emitted.kernels.iter().find(|e| e.name == k.entry) {
            k.shared_bytes = e.lds_bytes;
        }
    }
    Ok(Compiled {
        thread: lowered,
        llvm_ir: emitted.text,
        kernels,
    })
}

/// Translates lowered thread-level IR to LLVM IR.
pub fn translate(
    lowered: &thread::Module,
    target: &TargetDescription,
    options: &emit::EmitOptions,
) -> Result<emit::Emitted, PluginError> {
    emit::emit_module(lowered, target, options).map_err(|e| {
        let code = match e {
            emit::EmitError::Unsupported { .. } => ErrorCode::UnsupportedFeature,
            emit::EmitError::Unimplemented { .. } => ErrorCode::Unimplemented,
            emit::EmitError::Internal { .. } => ErrorCode::Internal,
        };
        PluginError::new(code, e.to_string())
    })
}

fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
    let target = targets::describe(&request.target)?;
    let emit = request.options.emit.as_str();
    if !emit.is_empty() && !EMITS.contains(&emit) {
        return Err(PluginError::new(
            ErrorCode::BadRequest,
            format!(
                "the rocm backend cannot emit `{emit}` (it emits: {})",
                EMITS.join(", ")
            ),
        ));
    }
    let options = emit::EmitOptions {
        fast_math: request.options.fast_math,
        contract: request
            .options
            .fp_contract()
            .map_err(|e| PluginError::new(ErrorCode::BadRequest, e))?,
    };
    let lower = lower_options(&request.options)?;
    let compiled = compile_module_with(&request.ir.module, &target, &options, &lower)?;
    let mut kernels = compiled.kernels;
    let mut diagnostics = Vec::new();
    let artifact = match emit {
        "thread-ir" => Artifact {
            name: "module.thr".to_string(),
            kind: ArtifactKind::Text,
            bytes: thread::print_module(&compiled.thread).into_bytes(),
        },
        "hsaco" => {
            let (bytes, warnings) = code_object(&compiled.llvm_ir, &target, &mut kernels)?;
            diagnostics = warnings;
            Artifact {
                name: "module.hsaco".to_string(),
                kind: ArtifactKind::Binary,
                bytes,
            }
        }
        _ => {
            if std::env::var_os(VALIDATE_VAR).is_some_and(|v| !v.is_empty() && v != "0") {
                diagnostics = code_object(&compiled.llvm_ir, &target, &mut kernels)?.1;
            }
            Artifact {
                name: "module.ll".to_string(),
                kind: ArtifactKind::Text,
                bytes: compiled.llvm_ir.into_bytes(),
            }
        }
    };
    Ok(CompileResult {
        artifacts: vec![artifact],
        kernels,
        diagnostics,
    })
}

impl BackendPlugin for Rocm {
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

tilec_plugin_api::export_backend!(Rocm);

#[cfg(test)]
mod tests {
    use super::*;

    /// The code-object check refuses what the target cannot hold: the same
    /// kernel passes against gfx942 and fails against a gfx942 with 64
    /// bytes of LDS.
    #[test]
    fn code_objects_are_checked_against_the_target() {
        if toolchain::find().is_err() {
            assert!(
                std::env::var_os("TILEC_REQUIRE_LLVM").is_none(),
                "TILEC_REQUIRE_LLVM is set but LLVM 19 was not found"
            );
            return;
        }
        let source = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/softmax.py"
        ))
        .expect("examples/softmax.py");
        let module = tilec_core::front::py::compile(&source, &Default::default())
            .module
            .expect("softmax compiles");
        let target = targets::describe("gfx942").expect("gfx942");
        let compiled = compile_module(&module, &target, &emit::EmitOptions::default())
            .expect("softmax lowers for gfx942");
        let mut kernels = compiled.kernels.clone();
        let built = code_object(&compiled.llvm_ir, &target, &mut kernels);
        assert!(built.is_ok(), "{:?}", built.err().map(|e| e.message));
        assert!(kernels.iter().all(|k| k.registers.is_some()));

        let mut tiny = target.clone();
        for space in &mut tiny.memory_spaces {
            if space.kind == MemoryKind::Shared {
                space.capacity_bytes = Some(64);
            }
        }
        let refused = code_object(&compiled.llvm_ir, &tiny, &mut kernels)
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(
            refused.contains("bytes of LDS, the target has 64"),
            "{refused}"
        );
    }
}
