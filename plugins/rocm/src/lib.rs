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

pub mod codeobject;
pub mod emit;
pub mod runtime;
pub mod targets;
pub mod toolchain;

use tilec_core::ir::{self, BinaryOp, Literal, Span};
use tilec_core::lower;
use tilec_core::target::TargetDescription;
use tilec_core::thread::{self, Dim, ExprKind, Param};
use tilec_plugin_api::{
    Artifact, ArtifactKind, BackendPlugin, CompileRequest, CompileResult, ErrorCode, IrLocation,
    KernelMetadata, ParamMetadata, PluginDiagnostic, PluginError, PluginInfo, RuntimeRequest,
    RuntimeResponse, Severity, TILE_IR_FORMAT, Version,
};

/// The plugin's name, as `--backend` selects it.
pub const NAME: &str = "rocm";

/// The `emit` values `compile` accepts.
pub const EMITS: [&str; 3] = ["llvm-ir", "hsaco", "thread-ir"];

/// The backend.
#[derive(Debug)]
pub struct Rocm;

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
            "emits AMDGPU LLVM IR; code objects with LLVM 19 (opt, llc, ld.lld)".to_string(),
            "MFMA 32x32x8 and 16x16x16, ds_bpermute shuffles; runtime through HIP".to_string(),
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
    let lowered = lower_functions(module, target)?;
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
    };
    let compiled = compile_module(&request.ir.module, &target, &options)?;
    let mut kernels = compiled.kernels;
    let artifact = match emit {
        "thread-ir" => Artifact {
            name: "module.thr".to_string(),
            kind: ArtifactKind::Text,
            bytes: thread::print_module(&compiled.thread).into_bytes(),
        },
        "hsaco" => {
            let tools = toolchain::find()
                .map_err(|e| PluginError::new(ErrorCode::Unimplemented, e.to_string()))?;
            let bytes = toolchain::build_code_object(&tools, &compiled.llvm_ir, &target.arch)
                .map_err(|e| PluginError::new(ErrorCode::Internal, e.to_string()))?;
            if let Ok(infos) = codeobject::kernels(&bytes) {
                for k in &mut kernels {
                    if let Some(info) = infos.iter().find(|i| i.name == k.entry) {
                        k.registers = info.vgprs.and_then(|v| u32::try_from(v).ok());
                    }
                }
            }
            Artifact {
                name: "module.hsaco".to_string(),
                kind: ArtifactKind::Binary,
                bytes,
            }
        }
        _ => Artifact {
            name: "module.ll".to_string(),
            kind: ArtifactKind::Text,
            bytes: compiled.llvm_ir.into_bytes(),
        },
    };
    Ok(CompileResult {
        artifacts: vec![artifact],
        kernels,
        diagnostics: Vec::new(),
    })
}

/// Refuses a buffer whose element type the target does not claim
/// (`UnsupportedDtype`, at the buffer's declaration).
fn check_dtypes(module: &ir::Module, target: &TargetDescription) -> Result<(), PluginError> {
    for f in &module.functions {
        for (i, (_, buffer)) in f.buffers.iter().enumerate() {
            let name = buffer.dtype.tilelang_name();
            if !target.dtypes.iter().any(|d| d == name) {
                let span = f.buffer_spans.get(i).copied().unwrap_or(Span::UNKNOWN);
                return Err(refusal(
                    ErrorCode::UnsupportedDtype,
                    &f.name,
                    span,
                    format!(
                        "{} has no {name} support (buffer `{}`)",
                        target.arch, buffer.name
                    ),
                ));
            }
        }
    }
    Ok(())
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
    Ok(KernelMetadata {
        entry: k.name.clone(),
        params,
        grid,
        threads: k.threads,
        shared_bytes: 0,
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

impl BackendPlugin for Rocm {
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
