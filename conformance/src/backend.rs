//! The backends the suite can test: the built-in reference backend and
//! plugins loaded through the plugin ABI, behind one interface.
//!
//! The suite talks to a backend in three steps, the same for every kind:
//! compile a module for the target, load the first artifact on a device,
//! and launch each kernel the compile result lists, in order, with the
//! function's parameters as device buffers (by name). The reference
//! backend does all of it in process through the reference interpreter; a
//! plugin does it through its runtime call.

use std::collections::BTreeMap;
use std::path::Path;
use tilec_core::interp::{self, Tensor};
use tilec_core::ir::{self, DType, Expr, Function, Literal, Module, Scope};
use tilec_plugin_api::host::{CallError, LoadedPlugin};
use tilec_plugin_api::{
    Artifact, ArtifactKind, CompileOptions, CompileResult, DeviceInfo, ErrorCode, IrLocation,
    KernelMetadata, ParamMetadata, PluginDiagnostic, PluginError, PluginInfo, RuntimeRequest,
    RuntimeResponse, Severity, TargetDescription,
};

/// Why a backend call did not give an answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// A structured refusal.
    #[error("{}: {}", .0.code.name(), .0.message)]
    Refused(PluginError),
    /// The backend panicked (caught at the ABI boundary).
    #[error("panicked: {0}")]
    Panic(String),
    /// An answer the protocol does not allow (malformed bytes, a response
    /// of the wrong kind, a result buffer of the wrong size).
    #[error("{0}")]
    Protocol(String),
}

impl BackendError {
    /// The error code of a structured refusal.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            BackendError::Refused(e) => Some(e.code),
            _ => None,
        }
    }
}

impl From<CallError> for BackendError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Plugin { error, .. } => BackendError::Refused(error),
            CallError::Panic { message, .. } => BackendError::Panic(message),
            other => BackendError::Protocol(other.to_string()),
        }
    }
}

/// A backend under test.
pub trait Backend: std::fmt::Debug {
    /// The `--backend` name.
    fn name(&self) -> &str;
    /// The plugin's self-description (`None` for the reference backend).
    fn plugin_info(&self) -> Option<&PluginInfo>;
    /// The description of the target under test.
    fn target(&self) -> &TargetDescription;
    /// The device kernels run on, or why there is none.
    fn device(&self) -> Result<DeviceInfo, String>;
    /// Compiles `module` for the target under test.
    fn compile(
        &self,
        module: &Module,
        options: &CompileOptions,
    ) -> Result<CompileResult, BackendError>;
    /// Runs the compiled `func` on `args` (one tensor per parameter), in
    /// place.
    fn execute(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &mut [Tensor],
    ) -> Result<(), BackendError> {
        self.execute_with(compiled, func, args, &interp::SymbolValues::new())
    }
    /// [`Backend::execute`] with explicit `values` of the function's
    /// scalar parameters (which are passed at launch, never bound from
    /// shapes) and of any symbolic size.
    fn execute_with(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &mut [Tensor],
        values: &interp::SymbolValues,
    ) -> Result<(), BackendError>;
}

/// The name of the reference backend.
pub const REFERENCE: &str = "ref";

/// The reference backend: the reference interpreter behind the backend
/// interface. Its "artifact" is the printed Tile IR; it claims every
/// capability the corpus names, so the suite's own self-test exercises
/// every test.
#[derive(Debug)]
pub struct Reference {
    target: TargetDescription,
}

/// The limits of the reference target, as data.
const REFERENCE_JSON: &str = include_str!("reference_target.json");

impl Reference {
    /// `capabilities`: what the reference claims (the union of the
    /// corpus's needs).
    pub fn new(capabilities: Vec<String>) -> Result<Reference, String> {
        let mut target = TargetDescription::from_json(REFERENCE_JSON)
            .map_err(|e| format!("the reference target description is invalid: {e}"))?;
        target.dtypes = DType::ALL
            .iter()
            .map(|d| d.tilelang_name().to_string())
            .collect();
        target.profiles = capabilities;
        Ok(Reference { target })
    }
}

/// The first artifact of a built-in backend's compile result, as text.
fn artifact_text(compiled: &CompileResult) -> Result<&str, BackendError> {
    let artifact = compiled
        .artifacts
        .first()
        .ok_or_else(|| BackendError::Protocol("no artifact".to_string()))?;
    std::str::from_utf8(&artifact.bytes)
        .map_err(|e| BackendError::Protocol(format!("artifact is not UTF-8: {e}")))
}

/// `InvalidIr` for a module that does not verify: backends never trust
/// their input.
fn verified(module: &Module) -> Result<(), BackendError> {
    ir::verify::verify_module(module).map_err(|errors| {
        let first = errors
            .first()
            .map(|(func, e)| format!("{func}: {e}"))
            .unwrap_or_default();
        BackendError::Refused(PluginError::new(
            ErrorCode::InvalidIr,
            format!("the module does not verify: {first}"),
        ))
    })
}

/// The constant value of an extent, if it is one.
fn constant(f: &Function, e: ir::Handle<Expr>) -> Option<u64> {
    match &f.exprs[e] {
        Expr::Literal(Literal::Int(v, _)) => u64::try_from(*v).ok(),
        _ => None,
    }
}

/// Bytes of every shared buffer of `f` with a constant shape.
pub fn shared_bytes(f: &Function) -> u64 {
    f.buffers
        .iter()
        .filter(|(_, b)| b.scope == Scope::Shared)
        .map(|(_, b)| {
            b.shape
                .iter()
                .map(|&e| constant(f, e).unwrap_or(0))
                .product::<u64>()
                .saturating_mul(b.dtype.bytes())
        })
        .sum()
}

/// Where the first shared buffer of `f` was declared.
fn first_shared_span(f: &Function) -> ir::Span {
    f.buffers
        .iter()
        .find(|(_, b)| b.scope == Scope::Shared)
        .and_then(|(h, _)| f.buffer_spans.get(h.index()).copied())
        .unwrap_or_default()
}

/// Launch metadata for one function, run whole.
fn function_metadata(f: &Function, shared: u64) -> KernelMetadata {
    let text = |e| constant(f, e).map_or_else(|| "?".to_string(), |v| v.to_string());
    KernelMetadata {
        entry: f.name.clone(),
        params: f
            .params
            .iter()
            .map(|p| {
                let b = &f.buffers[p.buffer];
                ParamMetadata {
                    name: b.name.clone(),
                    dtype: b.dtype.tilelang_name().to_string(),
                    shape: b.shape.iter().map(|&e| text(e)).collect(),
                }
            })
            .collect(),
        grid: Vec::new(),
        threads: 0,
        shared_bytes: shared,
        registers: None,
    }
}

impl Backend for Reference {
    fn name(&self) -> &str {
        REFERENCE
    }

    fn plugin_info(&self) -> Option<&PluginInfo> {
        None
    }

    fn target(&self) -> &TargetDescription {
        &self.target
    }

    fn device(&self) -> Result<DeviceInfo, String> {
        Ok(DeviceInfo {
            index: 0,
            name: "reference interpreter (CPU)".to_string(),
            arch: REFERENCE.to_string(),
            memory_bytes: 0,
            driver: format!("tilec-core {}", env!("CARGO_PKG_VERSION")),
        })
    }

    fn compile(
        &self,
        module: &Module,
        _options: &CompileOptions,
    ) -> Result<CompileResult, BackendError> {
        verified(module)?;
        let capacity = self
            .target
            .memory_of_kind(tilec_core::target::MemoryKind::Shared)
            .and_then(|m| m.capacity_bytes)
            .unwrap_or(u64::MAX);
        let mut kernels = Vec::new();
        for f in &module.functions {
            let shared = shared_bytes(f);
            if shared > capacity {
                let mut error = PluginError::new(
                    ErrorCode::UnsupportedFeature,
                    format!(
                        "`{}` needs {shared} bytes of shared memory; the target has {capacity}",
                        f.name
                    ),
                );
                error.diagnostics.push(PluginDiagnostic {
                    severity: Severity::Error,
                    message: error.message.clone(),
                    location: Some(IrLocation {
                        function: f.name.clone(),
                        span: first_shared_span(f),
                    }),
                    notes: Vec::new(),
                });
                return Err(BackendError::Refused(error));
            }
            kernels.push(function_metadata(f, shared));
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

    fn execute_with(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &mut [Tensor],
        values: &interp::SymbolValues,
    ) -> Result<(), BackendError> {
        // Run what was compiled, not the caller's module: the artifact is
        // the contract.
        let text = artifact_text(compiled)?;
        let module = tilec_core::text::parse_module(text)
            .map_err(|e| BackendError::Protocol(format!("artifact does not parse: {e}")))?;
        let loaded = module
            .functions
            .iter()
            .find(|f| f.name == func.name)
            .ok_or_else(|| BackendError::Protocol(format!("no function `{}`", func.name)))?;
        let options = interp::RunOptions {
            symbols: values.clone(),
            ..interp::RunOptions::default()
        };
        interp::run_with(loaded, args, &options).map_err(|e| {
            BackendError::Refused(PluginError::new(ErrorCode::Internal, e.to_string()))
        })
    }
}

/// A plugin loaded in this process, with the target under test.
#[derive(Debug)]
pub struct Plugin {
    plugin: LoadedPlugin,
    target: TargetDescription,
}

impl Plugin {
    /// Loads the plugin at `path` and describes `target` (the plugin's
    /// default target when `None`).
    pub fn load(path: &Path, target: Option<&str>) -> Result<Plugin, String> {
        let plugin = LoadedPlugin::load(path, true).map_err(|e| e.to_string())?;
        let arch = match target {
            Some(t) => t.to_string(),
            None => plugin
                .info
                .default_target
                .clone()
                .or_else(|| plugin.info.targets.first().cloned())
                .ok_or_else(|| format!("backend `{}` names no target", plugin.name()))?,
        };
        let target = plugin
            .describe_target(&arch)
            .map_err(|e| format!("cannot describe target `{arch}`: {e}"))?;
        Ok(Plugin { plugin, target })
    }

    /// The loaded plugin, for the ABI checks of level 0.
    pub fn loaded(&self) -> &LoadedPlugin {
        &self.plugin
    }

    fn call(&self, request: RuntimeRequest) -> Result<RuntimeResponse, BackendError> {
        Ok(self.plugin.runtime(&request)?)
    }

    fn buffer(&self, bytes: u64) -> Result<u64, BackendError> {
        match self.call(RuntimeRequest::Alloc { device: 0, bytes })? {
            RuntimeResponse::Buffer(b) => Ok(b),
            other => Err(unexpected("Alloc", &other)),
        }
    }
}

fn unexpected(request: &str, response: &RuntimeResponse) -> BackendError {
    let kind = match response {
        RuntimeResponse::Devices(_) => "Devices",
        RuntimeResponse::Buffer(_) => "Buffer",
        RuntimeResponse::Module(_) => "Module",
        RuntimeResponse::Data(_) => "Data",
        RuntimeResponse::Times(_) => "Times",
        RuntimeResponse::Done => "Done",
    };
    BackendError::Protocol(format!("`{request}` answered with `{kind}`"))
}

/// Evaluates a launch extent the way kernel metadata writes it: an
/// integer, or a symbol bound in `symbols`.
fn launch_extent(text: &str, symbols: &BTreeMap<String, i64>) -> Result<u32, String> {
    let value = tilec_plugin_api::extent::evaluate(text, symbols).map_err(|e| e.to_string())?;
    u32::try_from(value).map_err(|_| format!("extent `{text}` = {value} is not a launch dimension"))
}

impl Backend for Plugin {
    fn name(&self) -> &str {
        self.plugin.name()
    }

    fn plugin_info(&self) -> Option<&PluginInfo> {
        Some(&self.plugin.info)
    }

    fn target(&self) -> &TargetDescription {
        &self.target
    }

    fn device(&self) -> Result<DeviceInfo, String> {
        if !self.plugin.has_runtime() {
            return Err(format!("backend `{}` has no runtime", self.plugin.name()));
        }
        match self.plugin.runtime(&RuntimeRequest::Devices) {
            Ok(RuntimeResponse::Devices(devices)) => devices
                .into_iter()
                .next()
                .ok_or_else(|| format!("backend `{}` found no device", self.plugin.name())),
            Ok(other) => Err(unexpected("Devices", &other).to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn compile(
        &self,
        module: &Module,
        options: &CompileOptions,
    ) -> Result<CompileResult, BackendError> {
        Ok(self.plugin.compile(module, &self.target.arch, options)?)
    }

    fn execute_with(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &mut [Tensor],
        values: &interp::SymbolValues,
    ) -> Result<(), BackendError> {
        let mut buffers = self.upload(func, args)?;
        let result = self
            .scratch(compiled, func, args, values, &mut buffers)
            .and_then(|()| self.prepare(compiled, func, args, &buffers, values))
            .and_then(|launches| {
                for launch in launches {
                    self.call(launch)?;
                }
                self.call(RuntimeRequest::Synchronize { device: 0 })?;
                self.download(func, args, &buffers)
            });
        self.free(&buffers);
        result
    }
}

impl Plugin {
    /// Times the compiled kernels on `args` (copied to the device, not
    /// back): every kernel is launched `warmup` times and then timed
    /// `repeat` times with the runtime's device timer. With `sets > 1` the
    /// arguments are copied into that many sets of device buffers and
    /// consecutive launches take the sets in turn, so that a kernel whose
    /// data fits in a cache does not find it there from the launch before
    /// (each launch is then one `Time` call of one run). Answers the
    /// milliseconds of each timed run of each kernel, one list per kernel
    /// in launch order.
    pub fn time(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &[Tensor],
        sets: usize,
        warmup: u32,
        repeat: u32,
    ) -> Result<Vec<Vec<f64>>, BackendError> {
        let mut uploaded: Vec<BTreeMap<String, u64>> = Vec::with_capacity(sets.max(1));
        let result = (|| {
            for _ in 0..sets.max(1) {
                uploaded.push(self.upload(func, args)?);
                if let Some(buffers) = uploaded.last_mut() {
                    self.scratch(compiled, func, args, &interp::SymbolValues::new(), buffers)?;
                }
            }
            let module = self.load_module(compiled)?;
            let per_set = uploaded
                .iter()
                .map(|buffers| {
                    self.launches(
                        compiled,
                        func,
                        args,
                        buffers,
                        module,
                        &interp::SymbolValues::new(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let kernels = per_set.first().map_or(0, Vec::len);
            let mut times = Vec::with_capacity(kernels);
            for k in 0..kernels {
                let launch = |i: usize| Box::new(per_set[i % per_set.len()][k].clone());
                if per_set.len() == 1 {
                    times.push(self.time_call(launch(0), warmup, repeat)?);
                    continue;
                }
                for i in 0..warmup as usize {
                    self.time_call(launch(i), 0, 1)?;
                }
                let mut runs = Vec::with_capacity(repeat as usize);
                for i in 0..repeat as usize {
                    runs.extend(self.time_call(launch(warmup as usize + i), 0, 1)?);
                }
                times.push(runs);
            }
            Ok(times)
        })();
        for buffers in &uploaded {
            self.free(buffers);
        }
        result
    }

    /// One `Time` call.
    fn time_call(
        &self,
        launch: Box<RuntimeRequest>,
        warmup: u32,
        repeat: u32,
    ) -> Result<Vec<f64>, BackendError> {
        match self.call(RuntimeRequest::Time {
            launch,
            warmup,
            repeat,
        })? {
            RuntimeResponse::Times(t) => Ok(t),
            other => Err(unexpected("Time", &other)),
        }
    }

    /// Allocates one device buffer per parameter of `func` and copies
    /// `args` into them; the handles by buffer name.
    fn upload(
        &self,
        func: &Function,
        args: &[Tensor],
    ) -> Result<BTreeMap<String, u64>, BackendError> {
        let mut buffers = BTreeMap::new();
        for (param, tensor) in func.params.iter().zip(args) {
            let bytes = tensor.to_le_bytes();
            let handle = match self.buffer(bytes.len() as u64) {
                Ok(h) => h,
                Err(e) => {
                    self.free(&buffers);
                    return Err(e);
                }
            };
            buffers.insert(func.buffers[param.buffer].name.clone(), handle);
            self.call(RuntimeRequest::CopyToDevice {
                buffer: handle,
                offset: 0,
                data: bytes,
            })
            .inspect_err(|_| self.free(&buffers))?;
        }
        Ok(buffers)
    }

    /// Allocates, zeroed, the buffers the compiled kernels take beyond the
    /// function's parameters and sizes: the function's global scratch
    /// buffers (`T.alloc_global` beside its kernels), one per name, shared
    /// by every kernel of the launch (docs/plugin-abi.md, "Scratch
    /// buffers").
    fn scratch(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &[Tensor],
        values: &interp::SymbolValues,
        buffers: &mut BTreeMap<String, u64>,
    ) -> Result<(), BackendError> {
        let wanted: Vec<_> = compiled
            .kernels
            .iter()
            .flat_map(|k| k.params.iter().map(move |p| (k, p)))
            .filter(|(_, p)| !p.shape.is_empty() && !buffers.contains_key(&p.name))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let shapes: Vec<Vec<usize>> = args.iter().map(|t| t.shape.clone()).collect();
        let sizes = interp::bind_symbols_with(func, &shapes, values)
            .map_err(|e| BackendError::Protocol(format!("cannot bind sizes: {e}")))?;
        for (kernel, p) in wanted {
            if buffers.contains_key(&p.name) {
                continue;
            }
            let dtype = DType::from_tilelang_name(&p.dtype).ok_or_else(|| {
                BackendError::Protocol(format!(
                    "kernel `{}`: scratch buffer `{}` has an unknown dtype `{}`",
                    kernel.entry, p.name, p.dtype
                ))
            })?;
            let mut bytes = dtype.bytes();
            for text in &p.shape {
                let extent = tilec_plugin_api::extent::evaluate(text, &sizes)
                    .ok()
                    .and_then(|v| u64::try_from(v).ok())
                    .ok_or_else(|| {
                        BackendError::Protocol(format!(
                            "kernel `{}`: scratch buffer `{}`: extent `{text}` is not a size",
                            kernel.entry, p.name
                        ))
                    })?;
                bytes = bytes.checked_mul(extent).ok_or_else(|| {
                    BackendError::Protocol(format!(
                        "kernel `{}`: scratch buffer `{}` is too large",
                        kernel.entry, p.name
                    ))
                })?;
            }
            let handle = self.buffer(bytes)?;
            buffers.insert(p.name.clone(), handle);
            let zeros = usize::try_from(bytes).map(|n| vec![0u8; n]).map_err(|_| {
                BackendError::Protocol(format!("scratch buffer `{}` is too large", p.name))
            })?;
            self.call(RuntimeRequest::CopyToDevice {
                buffer: handle,
                offset: 0,
                data: zeros,
            })?;
        }
        Ok(())
    }

    /// Copies every parameter back into `args`.
    fn download(
        &self,
        func: &Function,
        args: &mut [Tensor],
        buffers: &BTreeMap<String, u64>,
    ) -> Result<(), BackendError> {
        for (param, tensor) in func.params.iter().zip(args.iter_mut()) {
            let name = &func.buffers[param.buffer].name;
            let len = tensor.len() as u64 * tensor.dtype.bytes();
            let data = match self.call(RuntimeRequest::CopyToHost {
                buffer: buffers[name],
                offset: 0,
                len,
            })? {
                RuntimeResponse::Data(d) => d,
                other => return Err(unexpected("CopyToHost", &other)),
            };
            *tensor = Tensor::from_le_bytes(tensor.dtype, tensor.shape.clone(), &data)
                .map_err(|e| BackendError::Protocol(format!("result `{name}`: {e}")))?;
        }
        Ok(())
    }

    fn free(&self, buffers: &BTreeMap<String, u64>) {
        for &handle in buffers.values() {
            // A failure to free is not the caller's result.
            let _ = self.call(RuntimeRequest::Free { buffer: handle });
        }
    }

    /// Loads the first artifact and builds one `Launch` per compiled
    /// kernel, in order.
    fn prepare(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &[Tensor],
        buffers: &BTreeMap<String, u64>,
        values: &interp::SymbolValues,
    ) -> Result<Vec<RuntimeRequest>, BackendError> {
        let module = self.load_module(compiled)?;
        self.launches(compiled, func, args, buffers, module, values)
    }

    /// Loads the compile result's first artifact; the module's handle.
    fn load_module(&self, compiled: &CompileResult) -> Result<u64, BackendError> {
        let artifact = compiled
            .artifacts
            .first()
            .ok_or_else(|| BackendError::Protocol("the compile result has no artifact".into()))?;
        match self.call(RuntimeRequest::Load {
            device: 0,
            artifact: artifact.clone(),
        })? {
            RuntimeResponse::Module(m) => Ok(m),
            other => Err(unexpected("Load", &other)),
        }
    }

    /// One launch per kernel of `module`, on the device buffers `buffers`.
    fn launches(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &[Tensor],
        buffers: &BTreeMap<String, u64>,
        module: u64,
        values: &interp::SymbolValues,
    ) -> Result<Vec<RuntimeRequest>, BackendError> {
        let shapes: Vec<Vec<usize>> = args.iter().map(|t| t.shape.clone()).collect();
        let symbols = interp::bind_symbols_with(func, &shapes, values)
            .map_err(|e| BackendError::Protocol(format!("cannot bind sizes: {e}")))?;
        let mut launches = Vec::with_capacity(compiled.kernels.len());
        for kernel in &compiled.kernels {
            let mut grid = [1u32; 3];
            for (slot, text) in grid.iter_mut().zip(&kernel.grid) {
                *slot = launch_extent(text, &symbols).map_err(|e| {
                    BackendError::Protocol(format!("kernel `{}`: grid: {e}", kernel.entry))
                })?;
            }
            // A buffer parameter takes its handle, a scalar one (a symbolic
            // size) its value.
            let args = kernel
                .params
                .iter()
                .map(|p| {
                    if let Some(&handle) = buffers.get(&p.name) {
                        return Ok(handle);
                    }
                    match symbols.get(&p.name) {
                        Some(&value) if p.shape.is_empty() => Ok(value as u64),
                        _ => Err(BackendError::Protocol(format!(
                            "kernel `{}` names parameter `{}`, which is neither a buffer nor a size of the function",
                            kernel.entry, p.name
                        ))),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            launches.push(RuntimeRequest::Launch {
                module,
                entry: kernel.entry.clone(),
                grid,
                threads: kernel.threads,
                shared_bytes: kernel.shared_bytes,
                args,
            });
        }
        Ok(launches)
    }
}

/// The name of the SIMT-interpreter backend.
pub const SIM: &str = "sim";

/// The SIMT backend: the core's lowering to thread-level IR for a shipped
/// target description, run thread by thread by the SIMT interpreter. Its
/// artifact is the thread-level IR text; its claims are the description's.
/// A kernel the lowering cannot handle is refused with
/// `UnsupportedFeature` — which, for a capability the target claims, the
/// suite counts as a failure: the lowering has to grow, not the claims
/// shrink.
#[derive(Debug)]
pub struct Sim {
    target: TargetDescription,
}

impl Sim {
    /// The SIMT backend for the built-in target `name`.
    pub fn new(name: &str) -> Result<Sim, String> {
        let target = tilec_core::target::builtin(name).map_err(|e| e.to_string())?;
        Ok(Sim { target })
    }
}

impl Backend for Sim {
    fn name(&self) -> &str {
        SIM
    }

    fn plugin_info(&self) -> Option<&PluginInfo> {
        None
    }

    fn target(&self) -> &TargetDescription {
        &self.target
    }

    fn device(&self) -> Result<DeviceInfo, String> {
        Ok(DeviceInfo {
            index: 0,
            name: format!("SIMT interpreter (CPU) for {}", self.target.name),
            arch: self.target.name.clone(),
            memory_bytes: 0,
            driver: format!("tilec-core {}", env!("CARGO_PKG_VERSION")),
        })
    }

    fn compile(
        &self,
        module: &Module,
        _options: &CompileOptions,
    ) -> Result<CompileResult, BackendError> {
        verified(module)?;
        // A dtype the target does not list is refused, as a real backend
        // for it would refuse it.
        for f in &module.functions {
            if let Some((_, b)) = f.buffers.iter().find(|(_, b)| {
                !self
                    .target
                    .dtypes
                    .iter()
                    .any(|d| d == b.dtype.tilelang_name())
            }) {
                return Err(BackendError::Refused(PluginError::new(
                    ErrorCode::UnsupportedDtype,
                    format!(
                        "target `{}` does not compute with {} (buffer `{}` of `{}`)",
                        self.target.name,
                        b.dtype.tilelang_name(),
                        b.name,
                        f.name
                    ),
                )));
            }
        }
        let lowered = tilec_core::lower::to_thread(module, &self.target).map_err(|e| {
            let code = match e {
                tilec_core::lower::LowerError::Unsupported { .. }
                | tilec_core::lower::LowerError::Pin { .. } => ErrorCode::UnsupportedFeature,
                _ => ErrorCode::Internal,
            };
            BackendError::Refused(PluginError::new(code, e.to_string()))
        })?;
        Ok(CompileResult {
            artifacts: vec![Artifact {
                name: "module.thr".to_string(),
                kind: ArtifactKind::Text,
                bytes: tilec_core::thread::print_module(&lowered).into_bytes(),
            }],
            kernels: module
                .functions
                .iter()
                .map(|f| function_metadata(f, shared_bytes(f)))
                .collect(),
            diagnostics: Vec::new(),
        })
    }

    fn execute_with(
        &self,
        compiled: &CompileResult,
        func: &Function,
        args: &mut [Tensor],
        values: &interp::SymbolValues,
    ) -> Result<(), BackendError> {
        let text = artifact_text(compiled)?;
        let module = tilec_core::thread::parse_module(text)
            .map_err(|e| BackendError::Protocol(format!("artifact does not parse: {e}")))?;
        let shapes: Vec<Vec<usize>> = args.iter().map(|t| t.shape.clone()).collect();
        let symbols = interp::bind_symbols_with(func, &shapes, values)
            .map_err(|e| BackendError::Protocol(format!("cannot bind sizes: {e}")))?;
        let options = tilec_core::simt::SimtOptions {
            symbols,
            ..tilec_core::simt::SimtOptions::default()
        };
        let failed = |e: tilec_core::simt::SimtError| {
            BackendError::Refused(PluginError::new(
                ErrorCode::Internal,
                format!("under the SIMT interpreter: {e}"),
            ))
        };
        // The function's global scratch buffers follow its parameters,
        // shared by its kernels.
        let mut all: Vec<Tensor> = args.to_vec();
        if let Some(first) = module.kernels.first() {
            all.extend(tilec_core::simt::scratch(first, args, &options).map_err(failed)?);
        }
        for kernel in &module.kernels {
            tilec_core::simt::run(kernel, &self.target, &mut all, &options).map_err(failed)?;
        }
        for (arg, result) in args.iter_mut().zip(all) {
            *arg = result;
        }
        Ok(())
    }
}
