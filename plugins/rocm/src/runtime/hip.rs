//! The HIP runtime API (`libamdhip64.so`), loaded with `libloading`: the
//! only module of the plugin with `unsafe` code. Every function here is a
//! safe wrapper whose preconditions are checked by its caller's types or
//! stated next to the call.
//!
//! The functions used are the stable C API of HIP (`hip_runtime_api.h`):
//! `hipInit`, `hipGetDeviceCount`, `hipSetDevice`, `hipDeviceGetName`,
//! `hipDeviceTotalMem`, `hipRuntimeGetVersion`, `hipMalloc`, `hipMemset`,
//! `hipFree`, `hipMemcpyHtoD`, `hipMemcpyDtoH`, `hipModuleLoadData`,
//! `hipModuleGetFunction`, `hipModuleLaunchKernel`,
//! `hipDeviceSynchronize`, `hipEventCreate`, `hipEventRecord`,
//! `hipEventSynchronize`, `hipEventElapsedTime`, `hipEventDestroy`,
//! `hipGetErrorName` and `hipGetErrorString`. Handles (`hipModule_t`,
//! `hipFunction_t`, `hipEvent_t`, device pointers) are opaque pointers;
//! `hipError_t` is a C enum, 0 meaning success.
//!
//! Nothing here has run against a real device in this repository's CI
//! (there is no AMD GPU there): it follows the documented signatures.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};

/// The library looked for.
pub const LIBRARY: &str = "libamdhip64.so";

type Err = c_int;
type Ptr = *mut c_void;

/// A failed HIP call: the call, the error code and HIP's texts for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HipError {
    pub call: &'static str,
    pub code: i32,
    pub name: String,
    pub text: String,
}

impl std::fmt::Display for HipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HIP: {} failed: {} ({}): {}",
            self.call, self.name, self.code, self.text
        )
    }
}

/// The entry points, resolved once.
#[derive(Clone, Copy)]
pub struct Hip {
    init: unsafe extern "C" fn(c_uint) -> Err,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> Err,
    set_device: unsafe extern "C" fn(c_int) -> Err,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> Err,
    device_total_mem: unsafe extern "C" fn(*mut usize, c_int) -> Err,
    runtime_get_version: unsafe extern "C" fn(*mut c_int) -> Err,
    malloc: unsafe extern "C" fn(*mut Ptr, usize) -> Err,
    memset: unsafe extern "C" fn(Ptr, c_int, usize) -> Err,
    free: unsafe extern "C" fn(Ptr) -> Err,
    memcpy_htod: unsafe extern "C" fn(Ptr, *const c_void, usize) -> Err,
    memcpy_dtoh: unsafe extern "C" fn(Ptr, Ptr, usize) -> Err,
    module_load_data: unsafe extern "C" fn(*mut Ptr, *const c_void) -> Err,
    module_get_function: unsafe extern "C" fn(*mut Ptr, Ptr, *const c_char) -> Err,
    #[allow(clippy::type_complexity)]
    module_launch_kernel: unsafe extern "C" fn(
        Ptr,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Ptr,
        *mut Ptr,
        *mut Ptr,
    ) -> Err,
    device_synchronize: unsafe extern "C" fn() -> Err,
    event_create: unsafe extern "C" fn(*mut Ptr) -> Err,
    event_record: unsafe extern "C" fn(Ptr, Ptr) -> Err,
    event_synchronize: unsafe extern "C" fn(Ptr) -> Err,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, Ptr, Ptr) -> Err,
    event_destroy: unsafe extern "C" fn(Ptr) -> Err,
    get_error_name: unsafe extern "C" fn(Err) -> *const c_char,
    get_error_string: unsafe extern "C" fn(Err) -> *const c_char,
}

impl std::fmt::Debug for Hip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hip")
    }
}

/// A device pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevicePtr(pub u64);

/// A loaded module (`hipModule_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleHandle(usize);

/// A kernel of a loaded module (`hipFunction_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionHandle(usize);

/// An event (`hipEvent_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventHandle(usize);

/// Why the library could not be used at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The library is not there.
    NotFound(String),
    /// It is there but lacks an entry point.
    Symbol(String),
}

impl Hip {
    /// Loads the library and resolves every entry point. The library is
    /// never unloaded (its handles must outlive every call).
    pub fn load() -> Result<Hip, LoadError> {
        // SAFETY: loading the HIP runtime runs its initialisers, which
        // only set up the runtime's own state.
        let lib = unsafe { libloading::Library::new(LIBRARY) }
            .map_err(|e| LoadError::NotFound(e.to_string()))?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol has the C signature of the field it is
                // stored in, as `hip_runtime_api.h` declares it.
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| LoadError::Symbol(format!("{}: {e}", $name)))?;
                *s
            }};
        }
        Ok(Hip {
            init: sym!("hipInit"),
            get_device_count: sym!("hipGetDeviceCount"),
            set_device: sym!("hipSetDevice"),
            device_get_name: sym!("hipDeviceGetName"),
            device_total_mem: sym!("hipDeviceTotalMem"),
            runtime_get_version: sym!("hipRuntimeGetVersion"),
            malloc: sym!("hipMalloc"),
            memset: sym!("hipMemset"),
            free: sym!("hipFree"),
            memcpy_htod: sym!("hipMemcpyHtoD"),
            memcpy_dtoh: sym!("hipMemcpyDtoH"),
            module_load_data: sym!("hipModuleLoadData"),
            module_get_function: sym!("hipModuleGetFunction"),
            module_launch_kernel: sym!("hipModuleLaunchKernel"),
            device_synchronize: sym!("hipDeviceSynchronize"),
            event_create: sym!("hipEventCreate"),
            event_record: sym!("hipEventRecord"),
            event_synchronize: sym!("hipEventSynchronize"),
            event_elapsed_time: sym!("hipEventElapsedTime"),
            event_destroy: sym!("hipEventDestroy"),
            get_error_name: sym!("hipGetErrorName"),
            get_error_string: sym!("hipGetErrorString"),
        })
    }

    fn text(ptr: *const c_char) -> String {
        if ptr.is_null() {
            return String::new();
        }
        // SAFETY: HIP returns pointers to static NUL-terminated strings.
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }

    fn check(&self, call: &'static str, code: Err) -> Result<(), HipError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: both functions accept any error code.
        let (name, text) = unsafe {
            (
                Self::text((self.get_error_name)(code)),
                Self::text((self.get_error_string)(code)),
            )
        };
        Err(HipError {
            call,
            code,
            name,
            text,
        })
    }

    pub fn init(&self) -> Result<(), HipError> {
        // SAFETY: flags must be 0.
        self.check("hipInit", unsafe { (self.init)(0) })
    }

    pub fn device_count(&self) -> Result<u32, HipError> {
        let mut n: c_int = 0;
        // SAFETY: writes one int.
        self.check("hipGetDeviceCount", unsafe {
            (self.get_device_count)(&mut n)
        })?;
        Ok(u32::try_from(n).unwrap_or(0))
    }

    pub fn set_device(&self, device: u32) -> Result<(), HipError> {
        let d = c_int::try_from(device).unwrap_or(c_int::MAX);
        // SAFETY: an out-of-range ordinal is reported as an error.
        self.check("hipSetDevice", unsafe { (self.set_device)(d) })
    }

    pub fn device_name(&self, device: u32) -> Result<String, HipError> {
        let mut buf = vec![0 as c_char; 256];
        let d = c_int::try_from(device).unwrap_or(c_int::MAX);
        // SAFETY: the buffer holds 256 chars, as the length says.
        self.check("hipDeviceGetName", unsafe {
            (self.device_get_name)(buf.as_mut_ptr(), 256, d)
        })?;
        buf.push(0);
        Ok(Self::text(buf.as_ptr()))
    }

    pub fn total_mem(&self, device: u32) -> Result<u64, HipError> {
        let mut bytes = 0usize;
        let d = c_int::try_from(device).unwrap_or(c_int::MAX);
        // SAFETY: writes one size_t.
        self.check("hipDeviceTotalMem", unsafe {
            (self.device_total_mem)(&mut bytes, d)
        })?;
        Ok(bytes as u64)
    }

    pub fn runtime_version(&self) -> Result<i32, HipError> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        self.check("hipRuntimeGetVersion", unsafe {
            (self.runtime_get_version)(&mut v)
        })?;
        Ok(v)
    }

    /// Allocates `bytes` (at least 1) of device memory, zero-filled.
    pub fn malloc_zeroed(&self, bytes: usize) -> Result<DevicePtr, HipError> {
        let size = bytes.max(1);
        let mut ptr: Ptr = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.check("hipMalloc", unsafe { (self.malloc)(&mut ptr, size) })?;
        // SAFETY: `ptr` points to `size` freshly allocated bytes.
        self.check("hipMemset", unsafe { (self.memset)(ptr, 0, size) })?;
        Ok(DevicePtr(ptr as u64))
    }

    /// Frees memory `malloc_zeroed` returned; the caller frees it once.
    pub fn free(&self, ptr: DevicePtr) -> Result<(), HipError> {
        // SAFETY: `ptr` came from hipMalloc and is freed once (the caller
        // removes it from its table first).
        self.check("hipFree", unsafe { (self.free)(ptr.0 as Ptr) })
    }

    /// Copies `data` to `dst`; the caller checked that the range lies in
    /// an allocation.
    pub fn copy_to_device(&self, dst: DevicePtr, data: &[u8]) -> Result<(), HipError> {
        // SAFETY: `data.len()` bytes from `dst` lie inside one allocation
        // (checked by the caller) and `data` is a live slice.
        self.check("hipMemcpyHtoD", unsafe {
            (self.memcpy_htod)(dst.0 as Ptr, data.as_ptr().cast(), data.len())
        })
    }

    /// Copies `out.len()` bytes from `src`; the caller checked the range.
    pub fn copy_to_host(&self, out: &mut [u8], src: DevicePtr) -> Result<(), HipError> {
        // SAFETY: as above, with `out` writable for its length.
        self.check("hipMemcpyDtoH", unsafe {
            (self.memcpy_dtoh)(out.as_mut_ptr().cast(), src.0 as Ptr, out.len())
        })
    }

    /// Loads a code object (an ELF image).
    pub fn module_load(&self, image: &[u8]) -> Result<ModuleHandle, HipError> {
        let mut module: Ptr = std::ptr::null_mut();
        // SAFETY: `image` is a complete ELF code object that stays alive
        // during the call (HIP copies what it keeps).
        self.check("hipModuleLoadData", unsafe {
            (self.module_load_data)(&mut module, image.as_ptr().cast())
        })?;
        Ok(ModuleHandle(module as usize))
    }

    pub fn function(&self, module: ModuleHandle, name: &str) -> Result<FunctionHandle, HipError> {
        let name = CString::new(name).map_err(|_| HipError {
            call: "hipModuleGetFunction",
            code: -1,
            name: "invalid name".into(),
            text: "the kernel name contains a NUL byte".into(),
        })?;
        let mut f: Ptr = std::ptr::null_mut();
        // SAFETY: `module` is a module HIP loaded and never unloaded.
        self.check("hipModuleGetFunction", unsafe {
            (self.module_get_function)(&mut f, module.0 as Ptr, name.as_ptr())
        })?;
        Ok(FunctionHandle(f as usize))
    }

    /// Launches `f` on the null stream. `args` holds one 8-byte slot per
    /// kernel argument (a device pointer, or a scalar in its low bytes).
    pub fn launch(
        &self,
        f: FunctionHandle,
        grid: [u32; 3],
        threads: u32,
        args: &mut [u64],
    ) -> Result<(), HipError> {
        let mut params: Vec<Ptr> = args
            .iter_mut()
            .map(|slot| (slot as *mut u64).cast::<c_void>())
            .collect();
        // SAFETY: `params` holds one pointer per kernel argument, each to
        // an 8-byte slot that outlives the call (HIP copies the values into
        // the kernel argument segment before returning; a 4-byte argument
        // reads the low half of its slot, little-endian); pointer
        // arguments are live allocations.
        self.check("hipModuleLaunchKernel", unsafe {
            (self.module_launch_kernel)(
                f.0 as Ptr,
                grid[0],
                grid[1],
                grid[2],
                threads,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    pub fn synchronize(&self) -> Result<(), HipError> {
        // SAFETY: no arguments.
        self.check("hipDeviceSynchronize", unsafe {
            (self.device_synchronize)()
        })
    }

    pub fn event_create(&self) -> Result<EventHandle, HipError> {
        let mut e: Ptr = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.check("hipEventCreate", unsafe { (self.event_create)(&mut e) })?;
        Ok(EventHandle(e as usize))
    }

    pub fn event_record(&self, e: EventHandle) -> Result<(), HipError> {
        // SAFETY: `e` is a live event; the null stream is the default one.
        self.check("hipEventRecord", unsafe {
            (self.event_record)(e.0 as Ptr, std::ptr::null_mut())
        })
    }

    pub fn event_synchronize(&self, e: EventHandle) -> Result<(), HipError> {
        // SAFETY: `e` is a live event.
        self.check("hipEventSynchronize", unsafe {
            (self.event_synchronize)(e.0 as Ptr)
        })
    }

    pub fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, HipError> {
        let mut ms = 0f32;
        // SAFETY: both events are live and completed.
        self.check("hipEventElapsedTime", unsafe {
            (self.event_elapsed_time)(&mut ms, start.0 as Ptr, end.0 as Ptr)
        })?;
        Ok(ms)
    }

    pub fn event_destroy(&self, e: EventHandle) {
        // SAFETY: `e` is destroyed once, after its last use.
        let _ = unsafe { (self.event_destroy)(e.0 as Ptr) };
    }
}
