//! Loading and calling the shared objects the CPU execution model builds:
//! the only module of the plugin with `unsafe` code. Every function here
//! documents what it relies on.

#![allow(unsafe_code)]

use std::path::Path;

/// The C signature of an emitted kernel's CPU launcher:
/// `int <entry>_cpu(uint32_t block_dim, uint8_t** args, uint8_t* tiling,
/// char* error, uint64_t error_len)`.
type Launcher = unsafe extern "C" fn(u32, *mut *mut u8, *mut u8, *mut u8, u64) -> i32;

/// A loaded kernel library.
#[derive(Debug)]
pub struct Library(libloading::Library);

impl Library {
    /// Loads the shared object at `path`.
    pub fn open(path: &Path) -> Result<Library, String> {
        // SAFETY: the library is one this runtime just built from emitted
        // source and the model header; its initialisers are the C++
        // runtime's own (static objects of the header have none).
        unsafe { libloading::Library::new(path) }
            .map(Library)
            .map_err(|e| e.to_string())
    }

    /// Runs `<entry>_cpu` on `block_dim` cores. `args` are the base
    /// addresses of the kernel's buffers in parameter order, then its
    /// workspace if it has one, `tiling` its tiling structure. Returns the
    /// model's error message on failure.
    pub fn launch(
        &self,
        entry: &str,
        block_dim: u32,
        args: &mut [*mut u8],
        tiling: &mut [u8],
    ) -> Result<(), String> {
        let symbol = format!("{entry}_cpu");
        // SAFETY: the emitter writes every `<entry>_cpu` with exactly the
        // `Launcher` signature (see `emit::kernel::Kernel::finish`).
        let launcher = unsafe { self.0.get::<Launcher>(symbol.as_bytes()) }
            .map_err(|e| format!("the kernel library has no `{symbol}`: {e}"))?;
        let mut error = vec![0u8; 4096];
        // SAFETY: `args` holds one pointer per buffer parameter of the
        // kernel, each to a live allocation of the size the kernel's
        // global tensors are declared with (the caller checked the sizes),
        // then, for a kernel with a workspace, one to `block_dim` times its
        // per-core workspace bytes;
        // `tiling` is laid out as `<entry>_Tiling` (i64 grid[3], then one
        // i64 per symbolic size); `error` has `error.len()` writable bytes.
        // Model errors are C++ exceptions caught inside the launcher.
        let rc = unsafe {
            launcher(
                block_dim,
                args.as_mut_ptr(),
                tiling.as_mut_ptr(),
                error.as_mut_ptr(),
                error.len() as u64,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let end = error.iter().position(|&b| b == 0).unwrap_or(error.len());
        Err(String::from_utf8_lossy(&error[..end]).into_owned())
    }
}
