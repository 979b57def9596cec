//! What the GPU tests share: the first device, buffers, and running a
//! thread-IR kernel through the emitter and the CUDA runtime.
//!
//! Every test that needs a GPU starts with [`device_or_skip`]: without a
//! device it passes vacuously, unless `TILEC_REQUIRE_GPU` is set.

use tilec_backend_cuda::{ptx, runtime, targets};
use tilec_core::thread;
use tilec_plugin_api::{Artifact, ArtifactKind, RuntimeRequest, RuntimeResponse};

pub fn call(request: RuntimeRequest) -> RuntimeResponse {
    match runtime::call(request) {
        Ok(r) => r,
        Err(e) => panic!("CUDA runtime: {}", e.message),
    }
}

/// The first device (`"name (arch)"`), or `None` without a driver or
/// device; then `TILEC_REQUIRE_GPU` makes the test fail instead of
/// passing vacuously.
pub fn device_or_skip() -> Option<String> {
    match runtime::call(RuntimeRequest::Devices) {
        Ok(RuntimeResponse::Devices(d)) if !d.is_empty() => {
            Some(format!("{} ({})", d[0].name, d[0].arch))
        }
        _ => {
            // These tests need a GPU; CI has none.
            assert!(
                std::env::var_os("TILEC_REQUIRE_GPU").is_none(),
                "TILEC_REQUIRE_GPU is set but the CUDA runtime finds no device"
            );
            None
        }
    }
}

pub fn alloc(bytes: usize) -> u64 {
    match call(RuntimeRequest::Alloc {
        device: 0,
        bytes: bytes as u64,
    }) {
        RuntimeResponse::Buffer(b) => b,
        other => panic!("Alloc answered {other:?}"),
    }
}

pub fn upload(buffer: u64, data: Vec<u8>) {
    call(RuntimeRequest::CopyToDevice {
        buffer,
        offset: 0,
        data,
    });
}

pub fn download(buffer: u64, len: usize) -> Vec<u8> {
    match call(RuntimeRequest::CopyToHost {
        buffer,
        offset: 0,
        len: len as u64,
    }) {
        RuntimeResponse::Data(d) => d,
        other => panic!("CopyToHost answered {other:?}"),
    }
}

/// The PTX the emitter writes for the one kernel of thread IR `text`
/// (default options: fast math off).
pub fn emit(text: &str, arch: &str) -> (thread::Module, ptx::PtxModule) {
    let module = thread::parse_module(text).unwrap_or_else(|e| panic!("test IR: {e}"));
    let target = targets::describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message));
    let emitted = ptx::emit_module(&module, &target, &ptx::PtxOptions::default())
        .unwrap_or_else(|e| panic!("PTX: {e}"));
    (module, emitted)
}

/// Compiles thread IR `text` for `arch` and runs its one kernel on `grid`
/// blocks of the kernel's threads with `args` (buffer handles).
pub fn launch(text: &str, arch: &str, grid: u32, args: Vec<u64>) {
    let (module, emitted) = emit(text, arch);
    let loaded = match call(RuntimeRequest::Load {
        device: 0,
        artifact: Artifact {
            name: "test.ptx".into(),
            kind: ArtifactKind::Text,
            bytes: emitted.text.into_bytes(),
        },
    }) {
        RuntimeResponse::Module(m) => m,
        other => panic!("Load answered {other:?}"),
    };
    call(RuntimeRequest::Launch {
        module: loaded,
        entry: module.kernels[0].name.clone(),
        grid: [grid, 1, 1],
        threads: module.kernels[0].threads,
        shared_bytes: emitted.kernels[0].shared_bytes,
        args,
    });
    call(RuntimeRequest::Synchronize { device: 0 });
}

pub fn free(buffer: u64) {
    call(RuntimeRequest::Free { buffer });
}
