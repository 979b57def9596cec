//! The fixture's in-process CPU runtime: one device, `fixture cpu`, whose
//! memory is host memory and which executes the plugin's own artifact (the
//! printed Tile IR, `module.tir`) with the reference interpreter
//! `tilec_core::interp` — the CPU execution model of conformance level 2.
//!
//! - `Devices`: one [`DeviceInfo`], index 0, arch `t0`.
//! - `Alloc` gives a zero-filled byte buffer; handles (of buffers and
//!   modules alike) are unique and never 0. `Free`, `CopyToDevice` and
//!   `CopyToHost` work on byte ranges of a buffer.
//! - `Load` parses the artifact as Tile IR text.
//! - `Launch` runs the function named `entry` on the buffers `args` (one
//!   per parameter, in order): each buffer is decoded with
//!   [`Tensor::from_le_bytes`] in its parameter's dtype and shape, the
//!   function runs with `interp::run`, and every tensor is written back with
//!   [`Tensor::to_le_bytes`]. `grid`, `threads` and `shared_bytes` are
//!   ignored: the interpreter runs the whole function.
//! - `Synchronize` answers `Done`; `Time` is `Unimplemented`.
//!
//! Bad requests (an unknown device, handle, module or entry, an
//! out-of-range copy, a buffer too small for its parameter) answer
//! `BadRequest`; a module that does not parse `InvalidIr`; a shape that
//! cannot be resolved without symbol values `Unimplemented`; an interpreter
//! error `Internal`. Nothing here panics on a request.
//!
//! The `wrong-numerics` variant corrupts one element of every buffer a
//! launch changed, and `abort-launch` aborts the process in `Launch`.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use tilec_core::interp::{self, Tensor};
use tilec_core::ir::Module;
use tilec_plugin_api::{DeviceInfo, ErrorCode, PluginError, RuntimeRequest, RuntimeResponse};

/// Device memory the runtime claims, and the most it hands out at once.
pub const MEMORY_BYTES: u64 = 1 << 32;

/// The message of the `Time` refusal.
pub const NO_TIMING: &str = "fixture cpu runtime does not time kernels";

/// Buffers and loaded modules, by handle.
#[derive(Debug)]
struct State {
    /// The next handle to give out; handles are never reused.
    next: u64,
    buffers: BTreeMap<u64, Vec<u8>>,
    modules: BTreeMap<u64, Module>,
    /// Bytes held by live buffers.
    allocated: u64,
}

impl State {
    fn handle(&mut self) -> u64 {
        let h = self.next;
        self.next += 1;
        h
    }

    fn buffer(&self, handle: u64) -> Result<&Vec<u8>, PluginError> {
        self.buffers
            .get(&handle)
            .ok_or_else(|| unknown_buffer(handle))
    }

    fn buffer_mut(&mut self, handle: u64) -> Result<&mut Vec<u8>, PluginError> {
        self.buffers
            .get_mut(&handle)
            .ok_or_else(|| unknown_buffer(handle))
    }
}

static STATE: Mutex<State> = Mutex::new(State {
    next: 1,
    buffers: BTreeMap::new(),
    modules: BTreeMap::new(),
    allocated: 0,
});

fn bad(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::BadRequest, message)
}

fn unknown_buffer(handle: u64) -> PluginError {
    bad(format!("fixture cpu runtime has no buffer {handle}"))
}

fn check_device(device: u32) -> Result<(), PluginError> {
    if device == 0 {
        Ok(())
    } else {
        Err(bad(format!(
            "fixture cpu runtime has no device {device} (it has device 0)"
        )))
    }
}

/// The byte range `offset .. offset + len` of a buffer of `size` bytes.
fn range(
    handle: u64,
    size: usize,
    offset: u64,
    len: u64,
) -> Result<std::ops::Range<usize>, PluginError> {
    let start = usize::try_from(offset).ok();
    let end = offset
        .checked_add(len)
        .and_then(|end| usize::try_from(end).ok());
    match (start, end) {
        (Some(start), Some(end)) if end <= size => Ok(start..end),
        _ => Err(bad(format!(
            "bytes {offset}..{offset}+{len} are outside buffer {handle} ({size} bytes)"
        ))),
    }
}

/// The one device.
fn device() -> DeviceInfo {
    DeviceInfo {
        index: 0,
        name: "fixture cpu".to_string(),
        arch: crate::TARGET.to_string(),
        memory_bytes: MEMORY_BYTES,
        driver: format!("fixture {}", env!("CARGO_PKG_VERSION")),
    }
}

/// Answers one runtime call.
pub fn call(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = &mut *state;
    match request {
        RuntimeRequest::Devices => Ok(RuntimeResponse::Devices(vec![device()])),
        RuntimeRequest::Alloc { device, bytes } => {
            check_device(device)?;
            let left = MEMORY_BYTES - state.allocated;
            let size = usize::try_from(bytes).ok().filter(|_| bytes <= left);
            let mut buffer = Vec::new();
            let Some(size) = size.filter(|&n| buffer.try_reserve_exact(n).is_ok()) else {
                return Err(bad(format!(
                    "fixture cpu runtime cannot allocate {bytes} bytes ({left} of {MEMORY_BYTES} free)"
                )));
            };
            buffer.resize(size, 0u8);
            let handle = state.handle();
            state.allocated += bytes;
            state.buffers.insert(handle, buffer);
            Ok(RuntimeResponse::Buffer(handle))
        }
        RuntimeRequest::Free { buffer } => {
            let freed = state
                .buffers
                .remove(&buffer)
                .ok_or_else(|| unknown_buffer(buffer))?;
            state.allocated = state.allocated.saturating_sub(freed.len() as u64);
            Ok(RuntimeResponse::Done)
        }
        RuntimeRequest::CopyToDevice {
            buffer,
            offset,
            data,
        } => {
            let target = state.buffer_mut(buffer)?;
            let r = range(buffer, target.len(), offset, data.len() as u64)?;
            target[r].copy_from_slice(&data);
            Ok(RuntimeResponse::Done)
        }
        RuntimeRequest::CopyToHost {
            buffer,
            offset,
            len,
        } => {
            let source = state.buffer(buffer)?;
            let r = range(buffer, source.len(), offset, len)?;
            Ok(RuntimeResponse::Data(source[r].to_vec()))
        }
        RuntimeRequest::Load { device, artifact } => {
            check_device(device)?;
            let text = std::str::from_utf8(&artifact.bytes).map_err(|e| {
                PluginError::new(
                    ErrorCode::InvalidIr,
                    format!("artifact `{}` is not UTF-8 text: {e}", artifact.name),
                )
            })?;
            let module = tilec_core::text::parse_module(text).map_err(|e| {
                PluginError::new(
                    ErrorCode::InvalidIr,
                    format!(
                        "artifact `{}` is not Tile IR: byte {}: {}",
                        artifact.name, e.offset, e.message
                    ),
                )
            })?;
            let handle = state.handle();
            state.modules.insert(handle, module);
            Ok(RuntimeResponse::Module(handle))
        }
        RuntimeRequest::Launch {
            module,
            entry,
            args,
            ..
        } => {
            if cfg!(feature = "abort-launch") {
                std::process::abort();
            }
            launch(state, module, &entry, &args)?;
            Ok(RuntimeResponse::Done)
        }
        RuntimeRequest::Synchronize { device } => {
            check_device(device)?;
            Ok(RuntimeResponse::Done)
        }
        RuntimeRequest::Time { .. } => Err(PluginError::new(ErrorCode::Unimplemented, NO_TIMING)),
    }
}

/// Runs `entry` of `module` on the buffers `args`.
fn launch(state: &mut State, module: u64, entry: &str, args: &[u64]) -> Result<(), PluginError> {
    let loaded = state
        .modules
        .get(&module)
        .ok_or_else(|| bad(format!("fixture cpu runtime has no module {module}")))?;
    let func = loaded
        .functions
        .iter()
        .find(|f| f.name == entry)
        .ok_or_else(|| bad(format!("module {module} has no function `{entry}`")))?;
    if args.len() != func.params.len() {
        return Err(bad(format!(
            "`{entry}` takes {} buffers, got {}",
            func.params.len(),
            args.len()
        )));
    }
    let shapes = interp::param_shapes(func, &BTreeMap::new()).map_err(|e| {
        PluginError::new(
            ErrorCode::Unimplemented,
            format!("fixture cpu runtime cannot resolve the parameter shapes of `{entry}`: {e}"),
        )
    })?;
    let mut tensors = Vec::with_capacity(args.len());
    // Each argument's bytes before the launch (`wrong-numerics` only).
    let mut before = Vec::new();
    for ((param, shape), &handle) in func.params.iter().zip(shapes).zip(args) {
        let buffer = func.buffers.try_get(param.buffer).ok_or_else(|| {
            PluginError::new(
                ErrorCode::InvalidIr,
                format!("`{entry}` has a parameter without a buffer"),
            )
        })?;
        let dtype = buffer.dtype;
        let data = state.buffer(handle)?;
        let need = shape
            .iter()
            .try_fold(dtype.bytes() as usize, |n, &e| n.checked_mul(e))
            .filter(|&n| n <= data.len())
            .ok_or_else(|| {
                bad(format!(
                    "buffer {handle} ({} bytes) is too small for parameter `{}` ({dtype}{shape:?})",
                    data.len(),
                    buffer.name
                ))
            })?;
        let bytes = &data[..need];
        let tensor = Tensor::from_le_bytes(dtype, shape, bytes).map_err(|e| {
            PluginError::new(
                ErrorCode::Internal,
                format!("decoding parameter `{}`: {e}", buffer.name),
            )
        })?;
        if cfg!(feature = "wrong-numerics") {
            before.push(bytes.to_vec());
        }
        tensors.push(tensor);
    }
    interp::run(func, &mut tensors).map_err(|e| {
        PluginError::new(
            ErrorCode::Internal,
            format!("`{entry}` failed in the interpreter: {e}"),
        )
    })?;
    for (i, (tensor, &handle)) in tensors.iter_mut().zip(args).enumerate() {
        let mut bytes = tensor.to_le_bytes();
        if let Some(old) = before.get(i)
            && let Some(index) = first_changed(old, &bytes, tensor.dtype.bytes() as usize)
        {
            corrupt(tensor, index);
            bytes = tensor.to_le_bytes();
        }
        let target = state.buffer_mut(handle)?;
        let r = range(handle, target.len(), 0, bytes.len() as u64)?;
        target[r].copy_from_slice(&bytes);
    }
    Ok(())
}

/// The index of the first element of `width` bytes that differs between
/// `old` and `new`.
fn first_changed(old: &[u8], new: &[u8], width: usize) -> Option<usize> {
    old.chunks(width.max(1))
        .zip(new.chunks(width.max(1)))
        .position(|(a, b)| a != b)
}

/// The `wrong-numerics` defect: element `index` becomes 1.0 (2.0 if it is
/// 1.0) for floats, flips its lowest bit for integers, is negated for bool.
fn corrupt(tensor: &mut Tensor, index: usize) {
    let dtype = tensor.dtype;
    match &mut tensor.data {
        interp::TensorData::Float(v) => {
            if let Some(x) = v.get_mut(index) {
                *x = if *x != 1.0 { 1.0 } else { 2.0 };
            }
        }
        interp::TensorData::Int(v) => {
            if let Some(x) = v.get_mut(index) {
                // For bool (stored as 0/1) this is negation.
                *x = dtype.wrap_i64(*x ^ 1);
            }
        }
    }
}
