//! The HIP runtime of the plugin: the ABI's runtime calls carried out
//! through HIP ([`hip`], loaded when first needed).
//!
//! - **No runtime.** Without `libamdhip64.so` every call answers
//!   `NoDevice` with [`NO_RUNTIME`]; with HIP but no device, `NoDevice`
//!   with HIP's answer.
//! - **Devices.** Names and memory come from HIP; the target name from the
//!   kernel driver's topology (`gfx_target_version` of the GPU nodes under
//!   `/sys/class/kfd/kfd/topology/nodes`, `90402` → `gfx942`), in node
//!   order.
//! - **Memory.** `Alloc` gives zero-filled device memory; handles (of
//!   buffers and modules alike) are unique, never 0 and never reused.
//!   Copies are synchronous. Every request first selects its device.
//! - **Modules.** `Load` takes a code object (`--emit hsaco`); an LLVM IR
//!   artifact is assembled first, for the device's processor, when LLVM is
//!   installed. Either way the code object is read with `tilec-inspect`:
//!   a cubin, or a code object built for another processor than the
//!   device's, is refused before HIP sees it; the kernels' argument lists
//!   come from its metadata note, so that `Launch` knows which arguments
//!   are buffer handles (`global_buffer`) and which are scalars
//!   (`by_value`, passed by value).
//! - **Launch** runs on the null stream with no dynamic LDS: the kernels'
//!   LDS is static, declared in the code object, so `shared_bytes` of the
//!   request is not added again. Errors of the kernel surface at the next
//!   synchronising call.
//! - **Time** launches `warmup` times, then `repeat` times between a pair
//!   of HIP events each, and answers the milliseconds of every timed
//!   launch.
//!
//! Without an AMD GPU only the `NoDevice` path runs here; the rest follows
//! HIP's documented API and is untested in this repository.

pub mod hip;

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use tilec_inspect::CodeObject;
use tilec_inspect::amdgpu::AmdgpuObject;
use tilec_plugin_api::{
    Artifact, DeviceInfo, ErrorCode, PluginError, RuntimeRequest, RuntimeResponse,
};

use hip::{DevicePtr, FunctionHandle, Hip, HipError, LoadError, ModuleHandle};

/// The message every call answers when HIP cannot be loaded.
pub const NO_RUNTIME: &str = "no HIP runtime found (libamdhip64.so could not be loaded)";

#[derive(Debug)]
struct Buffer {
    device: u32,
    ptr: DevicePtr,
    bytes: u64,
}

/// How a kernel argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKind {
    Buffer,
    Value,
}

#[derive(Debug)]
struct LoadedModule {
    device: u32,
    module: ModuleHandle,
    entries: BTreeMap<String, Vec<ArgKind>>,
}

#[derive(Debug)]
struct State {
    hip: Hip,
    devices: u32,
    version: i32,
    next: u64,
    buffers: BTreeMap<u64, Buffer>,
    modules: BTreeMap<u64, LoadedModule>,
    functions: BTreeMap<(u64, String), FunctionHandle>,
}

/// `None` until the first request; `Some(Err)` once HIP was found missing.
static STATE: Mutex<Option<Result<State, PluginError>>> = Mutex::new(None);

fn no_device(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::NoDevice, message)
}

fn bad(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::BadRequest, message)
}

fn failed(e: HipError) -> PluginError {
    PluginError::new(ErrorCode::Internal, e.to_string())
}

/// Answers one runtime request.
pub fn call(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::open);
    let state = state.as_mut().map_err(|e| e.clone())?;
    state.handle(request)
}

/// How each kernel of a code object takes its explicit arguments, from
/// the metadata note (every kernel must have its entry there: without it
/// a launch could not tell a buffer from a scalar).
fn argument_kinds(object: &AmdgpuObject) -> Result<BTreeMap<String, Vec<ArgKind>>, String> {
    if object.kernels.is_empty() {
        return Err("the code object holds no kernel".into());
    }
    object
        .kernels
        .iter()
        .map(|k| {
            let metadata = k.metadata.as_ref().ok_or_else(|| {
                format!(
                    "kernel `{}` has no entry in the AMDGPU metadata note",
                    k.name
                )
            })?;
            let kinds = metadata
                .explicit_args()
                .map(|a| {
                    if a.value_kind == "global_buffer" {
                        ArgKind::Buffer
                    } else {
                        ArgKind::Value
                    }
                })
                .collect();
            Ok((k.name.clone(), kinds))
        })
        .collect()
}

/// The target names of the machine's AMD GPUs, in KFD node order.
pub fn kfd_targets() -> Vec<String> {
    let Ok(nodes) = std::fs::read_dir("/sys/class/kfd/kfd/topology/nodes") else {
        return Vec::new();
    };
    let mut found: Vec<(u64, String)> = nodes
        .flatten()
        .filter_map(|node| {
            let index: u64 = node.file_name().to_str()?.parse().ok()?;
            let props = std::fs::read_to_string(node.path().join("properties")).ok()?;
            let version: u64 = props
                .lines()
                .find_map(|l| l.strip_prefix("gfx_target_version "))?
                .trim()
                .parse()
                .ok()?;
            (version != 0).then(|| (index, gfx_name(version)))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, name)| name).collect()
}

/// `gfx_target_version` as a target name: `90402` → `gfx942`,
/// `90010` → `gfx90a`.
pub fn gfx_name(version: u64) -> String {
    let (major, minor, step) = (version / 10000, (version / 100) % 100, version % 100);
    format!("gfx{major}{minor}{step:x}")
}

impl State {
    fn open() -> Result<State, PluginError> {
        let hip = Hip::load().map_err(|e| match e {
            LoadError::NotFound(_) => no_device(NO_RUNTIME),
            LoadError::Symbol(s) => {
                no_device(format!("{} lacks a HIP entry point ({s})", hip::LIBRARY))
            }
        })?;
        hip.init()
            .map_err(|e| no_device(format!("the HIP runtime did not start: {e}")))?;
        let devices = hip
            .device_count()
            .map_err(|e| no_device(format!("HIP found no device: {e}")))?;
        if devices == 0 {
            return Err(no_device("HIP found no device"));
        }
        let version = hip.runtime_version().unwrap_or(0);
        Ok(State {
            hip,
            devices,
            version,
            next: 1,
            buffers: BTreeMap::new(),
            modules: BTreeMap::new(),
            functions: BTreeMap::new(),
        })
    }

    fn handle_id(&mut self) -> u64 {
        let h = self.next;
        self.next += 1;
        h
    }

    fn enter(&self, device: u32) -> Result<(), PluginError> {
        if device >= self.devices {
            return Err(bad(format!(
                "no HIP device {device} (there are {})",
                self.devices
            )));
        }
        self.hip.set_device(device).map_err(failed)
    }

    fn buffer(&self, handle: u64) -> Result<&Buffer, PluginError> {
        self.buffers
            .get(&handle)
            .ok_or_else(|| bad(format!("no buffer with handle {handle}")))
    }

    /// The device and address of `len` bytes at `offset` of `buffer`.
    fn range(&self, buffer: u64, offset: u64, len: u64) -> Result<(u32, DevicePtr), PluginError> {
        let b = self.buffer(buffer)?;
        match offset.checked_add(len) {
            Some(end) if end <= b.bytes => Ok((b.device, DevicePtr(b.ptr.0 + offset))),
            _ => Err(bad(format!(
                "bytes {offset}..{offset}+{len} lie outside buffer {buffer} of {} bytes",
                b.bytes
            ))),
        }
    }

    fn handle(&mut self, request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        match request {
            RuntimeRequest::Devices => self.devices_info().map(RuntimeResponse::Devices),
            RuntimeRequest::Alloc { device, bytes } => {
                self.enter(device)?;
                let size = usize::try_from(bytes).map_err(|_| bad("allocation too large"))?;
                let ptr = self.hip.malloc_zeroed(size).map_err(failed)?;
                let handle = self.handle_id();
                self.buffers.insert(handle, Buffer { device, ptr, bytes });
                Ok(RuntimeResponse::Buffer(handle))
            }
            RuntimeRequest::Free { buffer } => {
                let b = self
                    .buffers
                    .remove(&buffer)
                    .ok_or_else(|| bad(format!("no buffer with handle {buffer}")))?;
                self.enter(b.device)?;
                self.hip.free(b.ptr).map_err(failed)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::CopyToDevice {
                buffer,
                offset,
                data,
            } => {
                let (device, ptr) = self.range(buffer, offset, data.len() as u64)?;
                self.enter(device)?;
                self.hip.copy_to_device(ptr, &data).map_err(failed)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::CopyToHost {
                buffer,
                offset,
                len,
            } => {
                let (device, ptr) = self.range(buffer, offset, len)?;
                let len = usize::try_from(len).map_err(|_| bad("copy too large"))?;
                self.enter(device)?;
                let mut data = vec![0u8; len];
                self.hip.copy_to_host(&mut data, ptr).map_err(failed)?;
                Ok(RuntimeResponse::Data(data))
            }
            RuntimeRequest::Load { device, artifact } => self.load(device, &artifact),
            RuntimeRequest::Launch { .. } => {
                self.launch(&request)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::Synchronize { device } => {
                self.enter(device)?;
                self.hip.synchronize().map_err(failed)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::Time {
                launch,
                warmup,
                repeat,
            } => self
                .time(&launch, warmup, repeat)
                .map(RuntimeResponse::Times),
        }
    }

    fn devices_info(&mut self) -> Result<Vec<DeviceInfo>, PluginError> {
        let archs = kfd_targets();
        let driver = format!(
            "HIP runtime {}.{}",
            self.version / 10_000_000,
            (self.version / 100_000) % 100
        );
        let mut out = Vec::new();
        for d in 0..self.devices {
            let name = self.hip.device_name(d).map_err(failed)?;
            let memory = self.hip.total_mem(d).map_err(failed)?;
            let arch = archs
                .get(d as usize)
                .cloned()
                .unwrap_or_else(|| "unknown".to_string());
            out.push(DeviceInfo {
                index: d,
                name,
                arch,
                memory_bytes: memory,
                driver: driver.clone(),
            });
        }
        Ok(out)
    }

    fn load(&mut self, device: u32, artifact: &Artifact) -> Result<RuntimeResponse, PluginError> {
        let device_arch = kfd_targets().get(device as usize).cloned();
        let image = if artifact.bytes.starts_with(b"\x7fELF") {
            artifact.bytes.clone()
        } else {
            // LLVM IR text: assemble it for the device's target.
            let ir = std::str::from_utf8(&artifact.bytes).map_err(|_| {
                bad(format!(
                    "`{}` is neither a code object nor text",
                    artifact.name
                ))
            })?;
            let arch = device_arch
                .clone()
                .unwrap_or_else(|| crate::targets::DEFAULT_TARGET.to_string());
            let tools = crate::toolchain::find()
                .map_err(|e| bad(format!("`{}` is LLVM IR and {e}", artifact.name)))?;
            crate::toolchain::build_code_object(&tools, ir, &arch)
                .map_err(|e| PluginError::new(ErrorCode::Internal, e.to_string()))?
        };
        let object = match tilec_inspect::inspect(&image, None) {
            Ok(CodeObject::Amdgpu(object)) => object,
            Ok(CodeObject::Cubin(_)) => {
                return Err(bad(format!(
                    "`{}` is an NVIDIA cubin, not an AMDGPU code object",
                    artifact.name
                )));
            }
            Err(e) => return Err(bad(format!("`{}`: {e}", artifact.name))),
        };
        if let (Some(built), Some(arch)) = (&object.target.processor, &device_arch)
            && built != arch
        {
            return Err(bad(format!(
                "`{}` is built for {built}; device {device} is {arch}",
                artifact.name
            )));
        }
        let entries =
            argument_kinds(&object).map_err(|e| bad(format!("`{}`: {e}", artifact.name)))?;
        self.enter(device)?;
        let module = self.hip.module_load(&image).map_err(failed)?;
        let handle = self.handle_id();
        self.modules.insert(
            handle,
            LoadedModule {
                device,
                module,
                entries,
            },
        );
        Ok(RuntimeResponse::Module(handle))
    }

    fn launch(&mut self, request: &RuntimeRequest) -> Result<(), PluginError> {
        let RuntimeRequest::Launch {
            module,
            entry,
            grid,
            threads,
            args,
            ..
        } = request
        else {
            return Err(bad("`Time` needs a `Launch` request to time"));
        };
        let loaded = self
            .modules
            .get(module)
            .ok_or_else(|| bad(format!("no module with handle {module}")))?;
        let device = loaded.device;
        let handle = loaded.module;
        let kinds = loaded
            .entries
            .get(entry)
            .cloned()
            .ok_or_else(|| bad(format!("the module has no kernel `{entry}`")))?;
        if kinds.len() != args.len() {
            return Err(bad(format!(
                "`{entry}` takes {} arguments, the launch passes {}",
                kinds.len(),
                args.len()
            )));
        }
        let mut slots = Vec::with_capacity(args.len());
        for (i, (&kind, &arg)) in kinds.iter().zip(args).enumerate() {
            slots.push(match kind {
                ArgKind::Buffer => {
                    let b = self
                        .buffer(arg)
                        .map_err(|e| bad(format!("argument {i} of `{entry}`: {}", e.message)))?;
                    if b.device != device {
                        return Err(bad(format!(
                            "argument {i} of `{entry}` lives on device {}, the module on {device}",
                            b.device
                        )));
                    }
                    b.ptr.0
                }
                ArgKind::Value => arg,
            });
        }
        self.enter(device)?;
        let key = (*module, entry.clone());
        let function = match self.functions.get(&key) {
            Some(f) => *f,
            None => {
                let f = self.hip.function(handle, entry).map_err(failed)?;
                self.functions.insert(key, f);
                f
            }
        };
        self.hip
            .launch(function, *grid, *threads, &mut slots)
            .map_err(failed)
    }

    fn time(
        &mut self,
        launch: &RuntimeRequest,
        warmup: u32,
        repeat: u32,
    ) -> Result<Vec<f64>, PluginError> {
        for _ in 0..warmup {
            self.launch(launch)?;
        }
        let start = self.hip.event_create().map_err(failed)?;
        let end = match self.hip.event_create() {
            Ok(e) => e,
            Err(e) => {
                self.hip.event_destroy(start);
                return Err(failed(e));
            }
        };
        let times = (|| {
            let mut times = Vec::with_capacity(repeat as usize);
            for _ in 0..repeat {
                self.hip.event_record(start).map_err(failed)?;
                self.launch(launch)?;
                self.hip.event_record(end).map_err(failed)?;
                self.hip.event_synchronize(end).map_err(failed)?;
                let ms = self.hip.event_elapsed_ms(start, end).map_err(failed)?;
                times.push(f64::from(ms));
            }
            Ok(times)
        })();
        self.hip.event_destroy(start);
        self.hip.event_destroy(end);
        times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch passes one value per kernel parameter: buffers (a shape)
    /// as device pointers, scalars by value, hidden arguments not at all.
    #[test]
    fn launch_arguments_follow_the_kernel_parameters() {
        let Ok(tools) = crate::toolchain::find() else {
            assert!(
                std::env::var_os("TILEC_REQUIRE_LLVM").is_none(),
                "TILEC_REQUIRE_LLVM is set but LLVM 19 was not found"
            );
            return;
        };
        let source = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/gemm.py"
        ))
        .unwrap_or_default();
        let Some(module) = tilec_core::front::py::compile(&source, &Default::default()).module
        else {
            panic!("examples/gemm.py does not compile");
        };
        let target = crate::targets::describe("gfx942").map_err(|e| e.message);
        let compiled = target.and_then(|t| {
            crate::compile_module(&module, &t, &crate::emit::EmitOptions::default())
                .map_err(|e| e.message)
        });
        let compiled = compiled.unwrap_or_else(|e| panic!("gemm for gfx942: {e}"));
        let image = crate::toolchain::build_code_object(&tools, &compiled.llvm_ir, "gfx942")
            .unwrap_or_else(|e| panic!("{e}"));
        let Ok(CodeObject::Amdgpu(object)) = tilec_inspect::inspect(&image, None) else {
            panic!("not an AMDGPU code object");
        };
        let kinds = argument_kinds(&object).unwrap_or_else(|e| panic!("{e}"));
        for k in &compiled.kernels {
            let expected: Vec<ArgKind> = k
                .params
                .iter()
                .map(|p| {
                    if p.shape.is_empty() {
                        ArgKind::Value
                    } else {
                        ArgKind::Buffer
                    }
                })
                .collect();
            assert_eq!(kinds.get(&k.entry), Some(&expected), "`{}`", k.entry);
        }
    }

    #[test]
    fn target_versions_name_targets() {
        assert_eq!(gfx_name(90402), "gfx942");
        assert_eq!(gfx_name(90010), "gfx90a");
        assert_eq!(gfx_name(110000), "gfx1100");
    }

    #[test]
    fn without_hip_every_call_says_so() {
        if Hip::load().is_ok() {
            return;
        }
        for request in [
            RuntimeRequest::Devices,
            RuntimeRequest::Alloc {
                device: 0,
                bytes: 4,
            },
            RuntimeRequest::Synchronize { device: 0 },
        ] {
            let e = call(request).err();
            assert_eq!(
                e.map(|e| (e.code, e.message)),
                Some((ErrorCode::NoDevice, NO_RUNTIME.to_string()))
            );
        }
    }
}
