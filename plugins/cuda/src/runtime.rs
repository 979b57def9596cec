//! The CUDA runtime of the plugin: the ABI's runtime calls carried out
//! through the CUDA driver API (`libcuda`), loaded when first needed.
//!
//! - **No driver.** `libcuda` is looked for before anything touches it
//!   (the bindings would otherwise panic): without it every call answers
//!   `NoDevice` with "no CUDA driver found"; with a driver but no device,
//!   `NoDevice` with the driver's answer.
//! - **Context.** Each device's primary context is retained on first use and
//!   made current on the calling thread for every request, so requests may
//!   come from any thread; one mutex serialises them.
//! - **Memory.** `Alloc` gives zero-filled device memory; handles (of
//!   buffers and modules alike) are unique, never 0 and never reused.
//!   Copies are synchronous.
//! - **Modules.** `Load` hands a PTX text (or a cubin) to the driver's JIT;
//!   a failure returns the JIT's error log. The parameter list of each
//!   `.entry` is read from the PTX so that `Launch` knows which arguments
//!   are buffers (`.u64` pointers: the argument is a buffer handle) and
//!   which are integer scalars (`.s32`, `.s64`, `.u32`: the argument is the
//!   value, two's complement in 64 bits). A `.param .align 64 .b8 x[128]`
//!   is a tensor map the launch builds itself (`cuTensorMapEncodeTiled`)
//!   from the `// tilec.tensor_map` line the emitter writes ahead of the
//!   entry (`ptx/tma.rs`): the described buffer's address, its extents
//!   (constants, or the values of scalar arguments) with row-major
//!   strides, the box and the swizzle. The launch's arguments are the
//!   other parameters, in order.
//! - **Launch** runs on the legacy default stream, so the copies that
//!   follow wait for it; dynamic shared memory above the 48 KiB default is
//!   opted into per function. Errors of the kernel itself surface at the
//!   next synchronising call, with the driver's error string.
//! - **Time** launches `warmup` times, then `repeat` times between a pair of
//!   CUDA events each, and answers the milliseconds of every timed launch.

// The driver API is a C interface: every call is `unsafe`. Each one's
// preconditions (live handles, buffers of the stated size) are checked in
// safe code before the call, as the comments at the call sites say.
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{CString, c_void};
use std::sync::{Mutex, PoisonError};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use tilec_plugin_api::{
    Artifact, DeviceInfo, ErrorCode, PluginError, RuntimeRequest, RuntimeResponse,
};

/// The message every call answers when `libcuda` cannot be loaded.
pub const NO_DRIVER: &str = "no CUDA driver found (libcuda.so could not be loaded)";

/// Dynamic shared memory a kernel may use without opting in.
const DEFAULT_DYNAMIC_SHARED: u64 = 48 << 10;

/// Size of the JIT's error and information logs.
const LOG_BYTES: usize = 16 << 10;

/// One argument slot of a kernel, from its PTX signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParamKind {
    Pointer,
    I32,
    I64,
    U32,
    /// A 128-byte tensor map built at launch.
    TensorMap,
}

/// One extent of a tensor map's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MapDim {
    Const(u64),
    /// The value of launch argument `i`.
    Arg(usize),
}

/// A tensor map parameter, from its `// tilec.tensor_map` line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MapSpec {
    param: String,
    /// The launch argument holding the buffer.
    global: usize,
    dtype: String,
    /// Outermost first.
    dims: Vec<MapDim>,
    boxes: Vec<u32>,
    swizzle: u32,
}

#[derive(Debug)]
struct Buffer {
    device: u32,
    ptr: sys::CUdeviceptr,
    bytes: u64,
}

#[derive(Debug)]
struct LoadedModule {
    device: u32,
    module: sys::CUmodule,
    /// Parameter kinds of each entry, by name.
    entries: BTreeMap<String, Vec<ParamKind>>,
    /// The tensor map parameters of each entry, in order.
    maps: BTreeMap<String, Vec<MapSpec>>,
}

#[derive(Debug)]
struct State {
    /// The primary context of each device, once retained.
    contexts: Vec<Option<sys::CUcontext>>,
    devices: Vec<sys::CUdevice>,
    driver_version: i32,
    next: u64,
    buffers: BTreeMap<u64, Buffer>,
    modules: BTreeMap<u64, LoadedModule>,
}

// SAFETY: the raw handles in `State` are driver objects, valid on any
// thread once their context is made current there, which every request
// does first; the mutex around `State` serialises all use.
unsafe impl Send for State {}

/// `None` until the first request; `Some(Err)` once the driver was found
/// missing (the answer does not change while the process lives).
static STATE: Mutex<Option<Result<State, PluginError>>> = Mutex::new(None);

fn no_device(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::NoDevice, message)
}

fn bad(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::BadRequest, message)
}

/// A driver failure, with the driver's own name and description.
fn driver(call: &str, e: DriverError) -> PluginError {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    PluginError::new(
        ErrorCode::Internal,
        format!("CUDA driver: {call} failed: {name}: {text}"),
    )
}

/// Answers one runtime request.
pub fn call(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::open);
    let state = state.as_mut().map_err(|e| e.clone())?;
    state.handle(request)
}

impl State {
    fn open() -> Result<State, PluginError> {
        // SAFETY: only tries to open the library; no symbol is used.
        if !unsafe { sys::is_culib_present() } {
            return Err(no_device(NO_DRIVER));
        }
        result::init().map_err(|e| no_device(format!("the CUDA driver did not start: {e}")))?;
        let count = result::device::get_count().map_err(|e| driver("cuDeviceGetCount", e))?;
        if count <= 0 {
            return Err(no_device("the CUDA driver found no device"));
        }
        let devices = (0..count)
            .map(|i| result::device::get(i).map_err(|e| driver("cuDeviceGet", e)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut driver_version = 0;
        // SAFETY: writes one int through a valid pointer.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(|e| driver("cuDriverGetVersion", e))?;
        Ok(State {
            contexts: vec![None; devices.len()],
            devices,
            driver_version,
            next: 1,
            buffers: BTreeMap::new(),
            modules: BTreeMap::new(),
        })
    }

    fn handle_id(&mut self) -> u64 {
        let h = self.next;
        self.next += 1;
        h
    }

    /// Makes `device`'s primary context current on this thread.
    fn enter(&mut self, device: u32) -> Result<(), PluginError> {
        let index = device as usize;
        let Some(&dev) = self.devices.get(index) else {
            return Err(bad(format!(
                "no CUDA device {device} (there are {})",
                self.devices.len()
            )));
        };
        let ctx = match self.contexts[index] {
            Some(ctx) => ctx,
            None => {
                // SAFETY: `dev` is a device handle the driver returned.
                let ctx = unsafe { result::primary_ctx::retain(dev) }
                    .map_err(|e| driver("cuDevicePrimaryCtxRetain", e))?;
                self.contexts[index] = Some(ctx);
                ctx
            }
        };
        // SAFETY: `ctx` is a retained primary context, never released.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| driver("cuCtxSetCurrent", e))
    }

    fn buffer(&self, handle: u64) -> Result<&Buffer, PluginError> {
        self.buffers
            .get(&handle)
            .ok_or_else(|| bad(format!("no buffer with handle {handle}")))
    }

    fn handle(&mut self, request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        match request {
            RuntimeRequest::Devices => self.devices_info().map(RuntimeResponse::Devices),
            RuntimeRequest::Alloc { device, bytes } => self.alloc(device, bytes),
            RuntimeRequest::Free { buffer } => {
                let b = self
                    .buffers
                    .remove(&buffer)
                    .ok_or_else(|| bad(format!("no buffer with handle {buffer}")))?;
                self.enter(b.device)?;
                // SAFETY: `b.ptr` was allocated by `cuMemAlloc` and is freed
                // once: it has just left the table.
                unsafe { result::free_sync(b.ptr) }.map_err(|e| driver("cuMemFree", e))?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::CopyToDevice {
                buffer,
                offset,
                data,
            } => {
                let (device, ptr) = self.range(buffer, offset, data.len() as u64)?;
                self.enter(device)?;
                // SAFETY: `range` checked that `data.len()` bytes from
                // `ptr` lie inside the allocation.
                unsafe { result::memcpy_htod_sync(ptr, &data) }
                    .map_err(|e| driver("cuMemcpyHtoD", e))?;
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
                // SAFETY: as above, and `data` holds `len` bytes.
                unsafe { result::memcpy_dtoh_sync(&mut data, ptr) }
                    .map_err(|e| driver("cuMemcpyDtoH", e))?;
                Ok(RuntimeResponse::Data(data))
            }
            RuntimeRequest::Load { device, artifact } => self.load(device, &artifact),
            RuntimeRequest::Launch { .. } => {
                self.launch(&request)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::Synchronize { device } => {
                self.enter(device)?;
                result::ctx::synchronize().map_err(|e| driver("cuCtxSynchronize", e))?;
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
        let driver_text = format!(
            "CUDA driver {}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        );
        let mut out = Vec::with_capacity(self.devices.len());
        for (index, &dev) in self.devices.iter().enumerate() {
            let name = result::device::get_name(dev).map_err(|e| driver("cuDeviceGetName", e))?;
            let attr = |a| {
                // SAFETY: `dev` is a device handle the driver returned.
                unsafe { result::device::get_attribute(dev, a) }
                    .map_err(|e| driver("cuDeviceGetAttribute", e))
            };
            let major =
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let minor =
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
            // SAFETY: as above.
            let memory = unsafe { result::device::total_mem(dev) }
                .map_err(|e| driver("cuDeviceTotalMem", e))?;
            out.push(DeviceInfo {
                index: index as u32,
                name,
                arch: crate::targets::arch_of_capability(major, minor),
                memory_bytes: memory as u64,
                driver: driver_text.clone(),
            });
        }
        Ok(out)
    }

    fn alloc(&mut self, device: u32, bytes: u64) -> Result<RuntimeResponse, PluginError> {
        self.enter(device)?;
        // cuMemAlloc refuses 0 bytes; a 0-byte buffer still needs a handle.
        let size = usize::try_from(bytes.max(1)).map_err(|_| bad("allocation too large"))?;
        // SAFETY: the device's context is current.
        let ptr = unsafe { result::malloc_sync(size) }.map_err(|e| driver("cuMemAlloc", e))?;
        // SAFETY: `ptr` points to `size` freshly allocated bytes.
        unsafe { result::memset_d8_sync(ptr, 0, size) }.map_err(|e| driver("cuMemsetD8", e))?;
        let handle = self.handle_id();
        self.buffers.insert(handle, Buffer { device, ptr, bytes });
        Ok(RuntimeResponse::Buffer(handle))
    }

    /// The device and address of `len` bytes at `offset` of `buffer`,
    /// refusing a range outside it.
    fn range(
        &self,
        buffer: u64,
        offset: u64,
        len: u64,
    ) -> Result<(u32, sys::CUdeviceptr), PluginError> {
        let b = self.buffer(buffer)?;
        match offset.checked_add(len) {
            Some(end) if end <= b.bytes => Ok((b.device, b.ptr + offset)),
            _ => Err(bad(format!(
                "bytes {offset}..{offset}+{len} lie outside buffer {buffer} of {} bytes",
                b.bytes
            ))),
        }
    }

    fn load(&mut self, device: u32, artifact: &Artifact) -> Result<RuntimeResponse, PluginError> {
        self.enter(device)?;
        let mut image = artifact.bytes.clone();
        // The driver reads PTX as a C string; a cubin carries its own size.
        let text = std::str::from_utf8(&artifact.bytes).ok();
        if text.is_some() {
            if image.contains(&0) {
                return Err(bad(format!("`{}` contains a NUL byte", artifact.name)));
            }
            image.push(0);
        }
        let entries = text.map(entry_params).unwrap_or_default();
        let maps = text.map(map_specs).transpose()?.unwrap_or_default();
        let module = jit_load(&image).map_err(|(e, log)| {
            let mut err = driver("cuModuleLoadDataEx", e);
            if !log.is_empty() {
                err.message = format!("{}\n{log}", err.message);
            }
            err
        })?;
        let handle = self.handle_id();
        self.modules.insert(
            handle,
            LoadedModule {
                device,
                module,
                entries,
                maps,
            },
        );
        Ok(RuntimeResponse::Module(handle))
    }

    /// Issues one `Launch` request (asynchronously).
    fn launch(&mut self, request: &RuntimeRequest) -> Result<(), PluginError> {
        let RuntimeRequest::Launch {
            module,
            entry,
            grid,
            threads,
            shared_bytes,
            args,
        } = request
        else {
            return Err(bad("`Time` needs a `Launch` request to time"));
        };
        let loaded = self
            .modules
            .get(module)
            .ok_or_else(|| bad(format!("no module with handle {module}")))?;
        let device = loaded.device;
        let kinds = loaded.entries.get(entry).cloned();
        let specs = loaded.maps.get(entry).cloned().unwrap_or_default();
        let cu_module = loaded.module;
        self.enter(device)?;
        let name = CString::new(entry.as_str()).map_err(|_| bad("entry name contains NUL"))?;
        // SAFETY: `cu_module` is a loaded module of the current context.
        let function = unsafe { result::module::get_function(cu_module, name) }
            .map_err(|e| driver(&format!("cuModuleGetFunction(`{entry}`)"), e))?;
        let kinds = kinds.unwrap_or_else(|| vec![ParamKind::Pointer; args.len()]);
        let plain: Vec<ParamKind> = kinds
            .iter()
            .copied()
            .filter(|&k| k != ParamKind::TensorMap)
            .collect();
        if plain.len() != args.len() || kinds.len() - plain.len() != specs.len() {
            return Err(bad(format!(
                "`{entry}` takes {} arguments, the launch passes {}",
                plain.len(),
                args.len()
            )));
        }
        // One 8-byte slot per argument; the driver reads each through a
        // pointer to its slot.
        let mut slots: Vec<u64> = Vec::with_capacity(args.len());
        for (i, (&kind, &arg)) in plain.iter().zip(args).enumerate() {
            slots.push(match kind {
                ParamKind::Pointer => {
                    let b = self
                        .buffer(arg)
                        .map_err(|e| bad(format!("argument {i} of `{entry}`: {}", e.message)))?;
                    if b.device != device {
                        return Err(bad(format!(
                            "argument {i} of `{entry}` lives on device {}, the module on {device}",
                            b.device
                        )));
                    }
                    b.ptr
                }
                ParamKind::I32 | ParamKind::U32 | ParamKind::I64 | ParamKind::TensorMap => arg,
            });
        }
        let mut maps = specs
            .iter()
            .map(|spec| encode_map(entry, spec, &plain, &slots))
            .collect::<Result<Vec<_>, _>>()?;
        // Little-endian: a 32-bit parameter reads the low half of its slot.
        let (mut next_slot, mut next_map) = (slots.iter_mut(), maps.iter_mut());
        let mut params: Vec<*mut c_void> = Vec::with_capacity(kinds.len());
        for kind in &kinds {
            let p = if *kind == ParamKind::TensorMap {
                next_map
                    .next()
                    .map(|m| (m as *mut sys::CUtensorMap).cast::<c_void>())
            } else {
                next_slot.next().map(|s| (s as *mut u64).cast::<c_void>())
            };
            params.push(p.ok_or_else(|| bad("parameter list mismatch"))?);
        }
        if *shared_bytes > DEFAULT_DYNAMIC_SHARED {
            let bytes = i32::try_from(*shared_bytes).map_err(|_| bad("shared memory too large"))?;
            // SAFETY: `function` is a live function of the current context.
            unsafe {
                result::function::set_function_attribute(
                    function,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes,
                )
            }
            .map_err(|e| driver("cuFuncSetAttribute(max dynamic shared memory)", e))?;
        }
        let shared = u32::try_from(*shared_bytes).map_err(|_| bad("shared memory too large"))?;
        // SAFETY: `params` holds one pointer per kernel parameter, each to an
        // 8-byte slot or a 128-byte tensor map that outlives the call (the
        // driver copies the values before returning); pointer arguments are
        // live allocations of this context.
        unsafe {
            result::launch_kernel(
                function,
                (grid[0], grid[1], grid[2]),
                (*threads, 1, 1),
                shared,
                std::ptr::null_mut(),
                &mut params,
            )
        }
        .map_err(|e| driver(&format!("cuLaunchKernel(`{entry}`)"), e))
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
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = result::event::create(flags).map_err(|e| driver("cuEventCreate", e))?;
        let end = result::event::create(flags).map_err(|e| driver("cuEventCreate", e))?;
        let times = (|| {
            let mut times = Vec::with_capacity(repeat as usize);
            for _ in 0..repeat {
                // SAFETY: both events belong to the current context; the
                // null stream is the legacy default stream.
                unsafe { result::event::record(start, std::ptr::null_mut()) }
                    .map_err(|e| driver("cuEventRecord", e))?;
                self.launch(launch)?;
                // SAFETY: as above.
                unsafe { result::event::record(end, std::ptr::null_mut()) }
                    .map_err(|e| driver("cuEventRecord", e))?;
                // SAFETY: as above.
                unsafe { result::event::synchronize(end) }
                    .map_err(|e| driver("cuEventSynchronize (the kernel failed)", e))?;
                // SAFETY: both events have completed.
                let ms = unsafe { result::event::elapsed(start, end) }
                    .map_err(|e| driver("cuEventElapsedTime", e))?;
                times.push(f64::from(ms));
            }
            Ok(times)
        })();
        // SAFETY: the events are destroyed once, after their last use.
        unsafe {
            let _ = result::event::destroy(start);
            let _ = result::event::destroy(end);
        }
        times
    }
}

/// Loads `image` (NUL-terminated PTX or a cubin) through the JIT,
/// returning the error log on failure.
fn jit_load(image: &[u8]) -> Result<sys::CUmodule, (DriverError, String)> {
    let mut log = vec![0u8; LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX text or a cubin; the log
    // buffer holds `LOG_BYTES` bytes, as the size option says; the option
    // arrays have two entries each.
    let status = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    match status.result() {
        Ok(()) => Ok(module),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            Err((e, String::from_utf8_lossy(&log[..end]).trim().to_string()))
        }
    }
}

/// The parameter kinds of every `.entry` of a PTX text.
fn entry_params(ptx: &str) -> BTreeMap<String, Vec<ParamKind>> {
    let mut out = BTreeMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        rest = &rest[at + ".entry".len()..];
        let Some(open) = rest.find('(') else { break };
        let name = rest[..open].trim().to_string();
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let list = &rest[open + 1..open + close];
        let kinds = list
            .split(',')
            .filter(|p| p.contains(".param"))
            .map(|p| {
                if p.contains(".b8") && p.contains("[128]") {
                    ParamKind::TensorMap
                } else if p.contains(".s64") {
                    ParamKind::I64
                } else if p.contains(".s32") {
                    ParamKind::I32
                } else if p.contains(".u32") || p.contains(".b32") {
                    ParamKind::U32
                } else {
                    ParamKind::Pointer
                }
            })
            .collect();
        out.insert(name, kinds);
        rest = &rest[open + close..];
    }
    out
}

/// The `// tilec.tensor_map` lines of a PTX text, by entry, in order.
fn map_specs(ptx: &str) -> Result<BTreeMap<String, Vec<MapSpec>>, PluginError> {
    let mut out: BTreeMap<String, Vec<MapSpec>> = BTreeMap::new();
    for line in ptx.lines() {
        let Some(rest) = line.trim().strip_prefix("// tilec.tensor_map ") else {
            continue;
        };
        let malformed = || bad(format!("malformed tensor map line `{line}`"));
        let mut words = rest.split_whitespace();
        let (Some(entry), Some(param)) = (words.next(), words.next()) else {
            return Err(malformed());
        };
        let mut fields = BTreeMap::new();
        for w in words {
            let (k, v) = w.split_once('=').ok_or_else(malformed)?;
            fields.insert(k, v);
        }
        let field = |k: &str| fields.get(k).copied().ok_or_else(malformed);
        let list = |v: &str| -> Result<Vec<u32>, PluginError> {
            v.split(',')
                .map(|x| x.parse::<u32>().map_err(|_| malformed()))
                .collect()
        };
        let dims = field("dims")?
            .split(',')
            .map(|d| {
                if let Some(c) = d.strip_prefix('c') {
                    c.parse().map(MapDim::Const).map_err(|_| malformed())
                } else if let Some(p) = d.strip_prefix('p') {
                    p.parse().map(MapDim::Arg).map_err(|_| malformed())
                } else {
                    Err(malformed())
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let spec = MapSpec {
            param: param.to_string(),
            global: field("global")?.parse().map_err(|_| malformed())?,
            dtype: field("dtype")?.to_string(),
            dims,
            boxes: list(field("box")?)?,
            swizzle: field("swizzle")?.parse().map_err(|_| malformed())?,
        };
        out.entry(entry.to_string()).or_default().push(spec);
    }
    Ok(out)
}

/// The tensor map `spec` describes, for a launch of `entry` whose plain
/// parameters have kinds `kinds` and values `slots` (buffer addresses and
/// scalar values).
fn encode_map(
    entry: &str,
    spec: &MapSpec,
    kinds: &[ParamKind],
    slots: &[u64],
) -> Result<sys::CUtensorMap, PluginError> {
    use sys::CUtensorMapDataType as T;
    let what = format!("tensor map `{}` of `{entry}`", spec.param);
    let (dtype, bytes) = match spec.dtype.as_str() {
        "u8" => (T::CU_TENSOR_MAP_DATA_TYPE_UINT8, 1),
        "u16" => (T::CU_TENSOR_MAP_DATA_TYPE_UINT16, 2),
        "u32" => (T::CU_TENSOR_MAP_DATA_TYPE_UINT32, 4),
        "i32" => (T::CU_TENSOR_MAP_DATA_TYPE_INT32, 4),
        "u64" => (T::CU_TENSOR_MAP_DATA_TYPE_UINT64, 8),
        "i64" => (T::CU_TENSOR_MAP_DATA_TYPE_INT64, 8),
        "f16" => (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2),
        "f32" => (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4),
        "f64" => (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8),
        "bf16" => (T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2),
        other => return Err(bad(format!("{what}: element type `{other}`"))),
    };
    let swizzle = match spec.swizzle {
        0 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        other => return Err(bad(format!("{what}: a {other}-byte swizzle"))),
    };
    if kinds.get(spec.global) != Some(&ParamKind::Pointer) {
        return Err(bad(format!(
            "{what}: argument {} is not a buffer",
            spec.global
        )));
    }
    let address = slots[spec.global];
    // Innermost first, as the driver takes them.
    let mut dims = Vec::with_capacity(spec.dims.len());
    for d in spec.dims.iter().rev() {
        let v = match *d {
            MapDim::Const(c) => c,
            MapDim::Arg(i) => {
                let v = slots
                    .get(i)
                    .copied()
                    .ok_or_else(|| bad(format!("{what}: no argument {i}")))?;
                // A size parameter is 32 bits wide.
                u64::from(v as u32)
            }
        };
        if v == 0 {
            return Err(bad(format!("{what}: an extent is zero")));
        }
        dims.push(v);
    }
    let rank = dims.len();
    if rank == 0 || rank > 5 || spec.boxes.len() != rank {
        return Err(bad(format!("{what}: rank {rank}")));
    }
    let mut strides = Vec::with_capacity(rank - 1);
    let mut stride = bytes;
    for d in &dims[..rank - 1] {
        stride *= d;
        strides.push(stride);
    }
    let boxes: Vec<u32> = spec.boxes.iter().rev().copied().collect();
    let element_strides = vec![1u32; rank];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every array holds `rank` entries (`strides` rank − 1), as
    // the call reads; `map` is writable storage of the right size and
    // alignment; the address is a live allocation of the launch's device.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            rank as u32,
            address as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(|e| driver(&format!("cuTensorMapEncodeTiled ({what})"), e))?;
    // SAFETY: the driver wrote the whole map on success.
    Ok(unsafe { map.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_signatures_are_read_from_ptx() {
        let ptx = "// x\n.visible .entry gemm(\n  .param .u64 A,\n  .param .u64 B,\n  .param .s32 m\n)\n.maxntid 128, 1, 1\n{\n}\n.visible .entry k2()\n{\n}\n";
        let e = entry_params(ptx);
        assert_eq!(
            e["gemm"],
            vec![ParamKind::Pointer, ParamKind::Pointer, ParamKind::I32]
        );
        assert_eq!(e["k2"], Vec::<ParamKind>::new());
    }

    #[test]
    fn tensor_map_lines_are_read_from_ptx() {
        let ptx = "// tilec.tensor_map gemm gemm_tA global=0 dtype=f16 dims=p3,c64 box=128,64 swizzle=128\n.visible .entry gemm(\n  .param .u64 gemm_A,\n  .param .s32 gemm_m,\n  .param .align 64 .b8 gemm_tA[128]\n)\n";
        let e = entry_params(ptx);
        assert_eq!(
            e["gemm"],
            vec![ParamKind::Pointer, ParamKind::I32, ParamKind::TensorMap]
        );
        let maps = map_specs(ptx).expect("parse");
        assert_eq!(
            maps["gemm"],
            vec![MapSpec {
                param: "gemm_tA".into(),
                global: 0,
                dtype: "f16".into(),
                dims: vec![MapDim::Arg(3), MapDim::Const(64)],
                boxes: vec![128, 64],
                swizzle: 128,
            }]
        );
        let broken =
            "// tilec.tensor_map gemm gemm_tA global=x dtype=f16 dims=p3 box=1 swizzle=0\n";
        assert!(map_specs(broken).is_err());
    }

    #[test]
    fn without_a_driver_every_call_says_so() {
        // SAFETY: only probes for the library.
        if unsafe { sys::is_culib_present() } {
            return;
        }
        let e = call(RuntimeRequest::Devices).err();
        assert_eq!(
            e.map(|e| (e.code, e.message)),
            Some((ErrorCode::NoDevice, NO_DRIVER.to_string()))
        );
    }
}
