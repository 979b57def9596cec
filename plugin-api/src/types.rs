//! The documents of the plugin protocol.
//!
//! Each type here is a [`Document`] with its own kind and format version.
//! Fields are only ever appended in a minor version; renaming, removing or
//! reordering a field needs a new major version of that document.

use crate::document::{Document, Version};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tilec_core::ir;

/// The Tile IR serialization this build writes: the format version of
/// [`IrDocument`].
pub const TILE_IR_FORMAT: Version = Version::new(0, 11);

/// What a plugin says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// The backend name users pass to `--backend` (`cuda`, `ascend`, ...).
    pub name: String,
    pub vendor: String,
    /// The plugin's own semantic version.
    pub plugin_version: String,
    /// Oldest and newest Tile IR format the plugin reads.
    pub ir_formats: (Version, Version),
    /// Target names the plugin serves (`sm_90a`, `gfx942`, ...).
    pub targets: Vec<String>,
    /// The target used when none is given.
    pub default_target: Option<String>,
    /// The IR level the plugin consumes: `tile` today.
    pub ir_level: String,
    /// Whether the plugin implements the runtime call.
    pub has_runtime: bool,
    /// Free-form notes shown by `tilec plugins` (a URL, a support contact).
    pub notes: Vec<String>,
}

impl Document for PluginInfo {
    const KIND: &'static str = "plugin-info";
    const VERSION: Version = Version::new(1, 0);
}

/// What the compiler may assume about one target: the core's target
/// description model (`tilec_core::target`, documented in
/// `docs/targets.md`), which the core's passes read and nothing else.
///
/// It crosses the boundary as JSON, never postcard: the model uses tagged
/// enums and optional fields that only a self-describing encoding carries,
/// and a description is read once per compilation, so its size does not
/// matter. [`crate::host::LoadedPlugin::describe_target`] asks for JSON.
pub use tilec_core::target::TargetDescription;

impl Document for TargetDescription {
    const KIND: &'static str = "target-description";
    /// 1.1 added the optional `parts`.
    const VERSION: Version = Version::new(1, 1);
}

/// Tile IR as it crosses the boundary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IrDocument {
    /// The Tile IR format the module is written in.
    pub format: Version,
    pub module: ir::Module,
}

impl Document for IrDocument {
    const KIND: &'static str = "tile-ir";
    const VERSION: Version = TILE_IR_FORMAT;
}

/// The key of [`CompileOptions::extra`] under which a host passes the
/// name of the source file the module's spans point into (as the user
/// wrote it), with [`SOURCE_TEXT_OPTION`].
pub const SOURCE_NAME_OPTION: &str = "tilec.source-name";

/// The key of [`CompileOptions::extra`] under which a host passes the text
/// of that source file, so that a backend can map spans (byte offsets) to
/// lines in what it writes. Backends ignore both keys when they do not
/// use them.
pub const SOURCE_TEXT_OPTION: &str = "tilec.source-text";

/// The key of [`CompileOptions::extra`] that lets a backend contract an
/// `f32` multiply and the add that consumes it into one fused multiply-add
/// (one rounding where the reference has two), as nvcc's and clang's
/// `-ffp-contract=fast`, their default for GPU code, does: `fast` allows
/// it, `off` (the default when the key is absent) keeps every operation
/// rounded on its own. `fast_math` implies `fast`. Read it with
/// [`CompileOptions::fp_contract`].
pub const FP_CONTRACT_OPTION: &str = "tilec.fp-contract";

/// Options of one compilation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileOptions {
    /// What to produce (`ptx`, `cubin`, `llvm-ir`, `source`, ...); empty for
    /// the plugin's default.
    pub emit: String,
    /// `tl.enable_fast_math` and friends: whether approximations are allowed.
    pub fast_math: bool,
    /// Further `key = value` options, passed through.
    pub extra: BTreeMap<String, String>,
}

impl CompileOptions {
    /// Whether multiplies may be fused into the adds that consume them:
    /// with `fast_math`, or with [`FP_CONTRACT_OPTION`] set to `fast`. A
    /// value other than `fast` or `off` is an error naming it (a backend
    /// refuses the request with `BadRequest`).
    pub fn fp_contract(&self) -> Result<bool, String> {
        let fused = match self.extra.get(FP_CONTRACT_OPTION).map(String::as_str) {
            None | Some("off") => false,
            Some("fast") => true,
            Some(other) => {
                return Err(format!(
                    "`{FP_CONTRACT_OPTION}` must be `fast` or `off`, not `{other}`"
                ));
            }
        };
        Ok(fused || self.fast_math)
    }
}

/// A request to compile a module for one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompileRequest {
    pub ir: IrDocument,
    pub target: String,
    pub options: CompileOptions,
}

impl Document for CompileRequest {
    const KIND: &'static str = "compile-request";
    const VERSION: Version = Version::new(1, 0);
}

/// Whether an artifact is text or binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArtifactKind {
    Text,
    Binary,
}

/// One produced file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Suggested file name (`gemm.ptx`).
    pub name: String,
    pub kind: ArtifactKind,
    pub bytes: Vec<u8>,
}

/// One kernel parameter as the launcher sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamMetadata {
    pub name: String,
    /// TileLang dtype name.
    pub dtype: String,
    /// Extents, each a text of the launch-extent language
    /// ([`crate::extent`], like [`KernelMetadata::grid`]): an integer, a
    /// symbolic size by name, or an expression of them (`(N + 127) //
    /// 128`); hosts evaluate it with [`crate::extent::evaluate`].
    pub shape: Vec<String>,
}

/// What a launcher needs to know about one compiled kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelMetadata {
    pub entry: String,
    pub params: Vec<ParamMetadata>,
    /// Grid extents (expressions over symbolic sizes, as text).
    pub grid: Vec<String>,
    pub threads: u32,
    pub shared_bytes: u64,
    pub registers: Option<u32>,
}

/// Severity of a plugin diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A place in the IR a plugin refers to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IrLocation {
    pub function: String,
    /// The source span the IR statement carries; the host maps it back to
    /// the user's file and line.
    pub span: ir::Span,
}

/// A message from a plugin about the user's kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginDiagnostic {
    pub severity: Severity,
    pub message: String,
    pub location: Option<IrLocation>,
    pub notes: Vec<String>,
}

/// A successful compilation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompileResult {
    pub artifacts: Vec<Artifact>,
    pub kernels: Vec<KernelMetadata>,
    /// Warnings and notes.
    pub diagnostics: Vec<PluginDiagnostic>,
}

impl Document for CompileResult {
    const KIND: &'static str = "compile-result";
    const VERSION: Version = Version::new(1, 0);
}

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorCode {
    /// The IR breaks a rule the plugin relies on.
    InvalidIr,
    /// The kernel needs a capability the target does not claim.
    UnsupportedFeature,
    /// A dtype the target cannot compute with.
    UnsupportedDtype,
    /// The plugin does not implement this yet (a claimed capability).
    Unimplemented,
    /// The plugin's own bug.
    Internal,
    /// A runtime call without a device (or without the vendor runtime).
    NoDevice,
    /// The target name is not one the plugin serves.
    UnknownTarget,
    /// The request could not be decoded.
    BadRequest,
    /// The plugin panicked; the message is the panic's.
    Panic,
}

impl ErrorCode {
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::InvalidIr => "InvalidIr",
            ErrorCode::UnsupportedFeature => "UnsupportedFeature",
            ErrorCode::UnsupportedDtype => "UnsupportedDtype",
            ErrorCode::Unimplemented => "Unimplemented",
            ErrorCode::Internal => "Internal",
            ErrorCode::NoDevice => "NoDevice",
            ErrorCode::UnknownTarget => "UnknownTarget",
            ErrorCode::BadRequest => "BadRequest",
            ErrorCode::Panic => "Panic",
        }
    }
}

/// A failed call: a code, a message, and diagnostics pointing into the IR.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginError {
    pub code: ErrorCode,
    pub message: String,
    pub diagnostics: Vec<PluginDiagnostic>,
}

impl PluginError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        PluginError {
            code,
            message: message.into(),
            diagnostics: Vec::new(),
        }
    }
}

impl Document for PluginError {
    const KIND: &'static str = "plugin-error";
    const VERSION: Version = Version::new(1, 0);
}

/// A call of the optional runtime part (ABI 1.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RuntimeRequest {
    /// List devices.
    Devices,
    /// Allocate `bytes` on `device`.
    Alloc {
        device: u32,
        bytes: u64,
    },
    Free {
        buffer: u64,
    },
    CopyToDevice {
        buffer: u64,
        offset: u64,
        data: Vec<u8>,
    },
    CopyToHost {
        buffer: u64,
        offset: u64,
        len: u64,
    },
    /// Load a compiled artifact on a device.
    Load {
        device: u32,
        artifact: Artifact,
    },
    /// Launch `entry` of a loaded module; `args` are buffer handles in
    /// parameter order.
    Launch {
        module: u64,
        entry: String,
        grid: [u32; 3],
        threads: u32,
        shared_bytes: u64,
        args: Vec<u64>,
    },
    Synchronize {
        device: u32,
    },
    /// Time `launch` `repeat` times with device events; returns per-launch
    /// times.
    Time {
        launch: Box<RuntimeRequest>,
        warmup: u32,
        repeat: u32,
    },
}

impl Document for RuntimeRequest {
    const KIND: &'static str = "runtime-request";
    const VERSION: Version = Version::new(1, 0);
}

/// One device as the runtime reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub index: u32,
    pub name: String,
    /// The target name the device runs (`sm_90a`).
    pub arch: String,
    pub memory_bytes: u64,
    /// The vendor driver or runtime and its version. A device that is a
    /// software model of the hardware running on the host CPU says so with
    /// the prefix [`CPU_MODEL_DRIVER`] (`cpu-model: …`).
    pub driver: String,
}

/// The `driver` prefix of a device that is a CPU execution model of the
/// hardware, not the hardware: it runs kernels (conformance L2 goes
/// through it, labelled), but `tilec run --backend auto` passes over it.
pub const CPU_MODEL_DRIVER: &str = "cpu-model";

impl DeviceInfo {
    /// Whether the device is a CPU execution model ([`CPU_MODEL_DRIVER`]).
    pub fn is_cpu_model(&self) -> bool {
        self.driver.starts_with(CPU_MODEL_DRIVER)
    }
}

/// The answer to a [`RuntimeRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RuntimeResponse {
    Devices(Vec<DeviceInfo>),
    Buffer(u64),
    Module(u64),
    Data(Vec<u8>),
    /// Milliseconds per launch.
    Times(Vec<f64>),
    Done,
}

impl Document for RuntimeResponse {
    const KIND: &'static str = "runtime-response";
    const VERSION: Version = Version::new(1, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_contract(value: Option<&str>, fast_math: bool) -> CompileOptions {
        let mut options = CompileOptions {
            fast_math,
            ..CompileOptions::default()
        };
        if let Some(v) = value {
            options
                .extra
                .insert(FP_CONTRACT_OPTION.to_string(), v.to_string());
        }
        options
    }

    #[test]
    fn contraction_is_off_unless_asked_for_or_implied_by_fast_math() {
        assert_eq!(with_contract(None, false).fp_contract(), Ok(false));
        assert_eq!(with_contract(Some("off"), false).fp_contract(), Ok(false));
        assert_eq!(with_contract(Some("fast"), false).fp_contract(), Ok(true));
        assert_eq!(with_contract(None, true).fp_contract(), Ok(true));
        assert_eq!(with_contract(Some("off"), true).fp_contract(), Ok(true));
        let err = with_contract(Some("on"), false)
            .fp_contract()
            .expect_err("`on` is not a mode");
        assert!(err.contains("`on`"), "{err}");
    }
}
