//! The runtime of the plugin: the ABI's runtime calls carried out on the
//! **CPU execution model** of the AscendC API.
//!
//! - **Device.** One device, named as the CPU model (conformance reports
//!   show that name), for the `ascend910b` target. Without a C++ compiler
//!   every call answers `NoDevice` saying so.
//! - **Memory.** Host memory stands in for global memory: zero-filled,
//!   handles unique and never reused.
//! - **Load** takes the emitted AscendC source, writes it beside the model
//!   header `cpu/ascendc_cpu.h` and compiles both into a shared object with
//!   `-DASCENDC_CPU_MODEL` and the target's capacities as defines
//!   (`ASCENDC_CPU_UB_BYTES`, ...); identical sources reuse their build.
//! - **Launch** fills the kernel's tiling structure (grid, symbolic sizes)
//!   and runs its CPU launcher on `min(blocks, AI cores)` model cores, one
//!   after another. A kernel whose entry line names a workspace (`ws=N`:
//!   bytes per core) gets `block_dim · N` bytes of global memory after its
//!   buffers, as the host stub's caller would allocate them; they start as
//!   `0xFF` bytes (NaN in every float type), so a read of workspace nothing
//!   wrote shows in the results. A violation the model detects (capacity,
//!   alignment, bounds, pipe synchronisation) fails the launch with its
//!   message.
//! - **Time** measures host wall time; it says nothing about an NPU.
//!
//! The compiler is the one [`CXX_VAR`] names, else `c++`, `g++` or
//! `clang++` on `PATH`.

pub mod cache;
mod dl;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use tilec_plugin_api::{
    Artifact, DeviceInfo, ErrorCode, PluginError, RuntimeRequest, RuntimeResponse,
};

use crate::emit::{EntryInfo, parse_entries};
use crate::targets::{self, Engine};

/// Names the C++ compiler the CPU model is built with.
pub const CXX_VAR: &str = "TILEC_ASCEND_CXX";

/// The model header, as shipped in `cpu/`.
pub const MODEL_HEADER: &str = include_str!("../../cpu/ascendc_cpu.h");

/// The name of the one device.
pub fn device_name(target: &str) -> String {
    format!("AscendC CPU execution model for {target} (not an NPU)")
}

#[derive(Debug)]
struct Module {
    lib: dl::Library,
    entries: BTreeMap<String, EntryInfo>,
}

#[derive(Debug)]
struct State {
    cxx: PathBuf,
    cxx_version: String,
    engine: Engine,
    next: u64,
    buffers: BTreeMap<u64, Vec<u8>>,
    modules: BTreeMap<u64, Module>,
    build_dir: PathBuf,
    /// The folder `build_dir` names when there is no user cache; removed
    /// when the state goes.
    _scratch: Option<tempfile::TempDir>,
}

static STATE: Mutex<Option<Result<State, PluginError>>> = Mutex::new(None);

fn bad(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::BadRequest, message)
}

fn internal(message: impl Into<String>) -> PluginError {
    PluginError::new(ErrorCode::Internal, message)
}

/// The C++ compiler the model is built with, if any.
pub fn find_cxx() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(CXX_VAR) {
        return Some(PathBuf::from(p));
    }
    ["c++", "g++", "clang++"]
        .iter()
        .find_map(|n| crate::toolchain::on_path(n))
}

/// Answers one runtime request.
pub fn call(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::open);
    let state = state.as_mut().map_err(|e| e.clone())?;
    state.handle(request)
}

/// Compiles `source` (an emitted AscendC file) with the model header into
/// a shared object under `dir`; returns its path. Builds are cached by the
/// hash of everything that goes into them (see [`cache`]); `dir` must be
/// private to the user, and an entry is loaded only when its library
/// matches the hash stored beside it.
pub fn build(
    cxx: &std::path::Path,
    engine: &Engine,
    source: &str,
    dir: &std::path::Path,
) -> Result<PathBuf, String> {
    let defines = [
        format!("-DASCENDC_CPU_UB_BYTES={}", engine.ub.capacity),
        format!("-DASCENDC_CPU_L1_BYTES={}", engine.l1.capacity),
        format!("-DASCENDC_CPU_L0A_BYTES={}", engine.l0a.capacity),
        format!("-DASCENDC_CPU_L0B_BYTES={}", engine.l0b.capacity),
        format!("-DASCENDC_CPU_L0C_BYTES={}", engine.l0c.capacity),
        format!("-DASCENDC_CPU_CORES={}", engine.cores),
        format!("-DASCENDC_CPU_EVENT_IDS={}", engine.event_ids),
    ];
    cache::check_private(dir)?;
    let key = cache::key(&[
        source.as_bytes(),
        MODEL_HEADER.as_bytes(),
        defines.join("\n").as_bytes(),
        cxx.as_os_str().as_encoded_bytes(),
    ]);
    let work = dir.join(&key);
    let so = work.join("kernel.so");
    // An entry is used only when the library's bytes match the hash
    // stored beside it; anything else (half written, changed since) is
    // rebuilt.
    if cache::verified(&so) {
        return Ok(so);
    }
    cache::create_private(&work)?;
    cache::check_private(&work)?;
    // Sources in a folder of this build's own (random name, mode 0700):
    // another process may be building the same kernel at the same time;
    // the library is renamed into place whole.
    let src = tempfile::Builder::new()
        .prefix("src-")
        .tempdir_in(&work)
        .map_err(|e| format!("cannot create a build folder in {}: {e}", work.display()))?;
    let io = |e: std::io::Error| format!("{}: {e}", src.path().display());
    std::fs::write(src.path().join("ascendc_cpu.h"), MODEL_HEADER).map_err(io)?;
    let cpp = src.path().join("kernel.cpp");
    std::fs::write(&cpp, source).map_err(io)?;
    let tmp = src.path().join("kernel.so");
    let out = Command::new(cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-shared",
            "-fPIC",
            "-s",
            "-w",
            "-DASCENDC_CPU_MODEL",
        ])
        .args(&defines)
        .arg("-I")
        .arg(src.path())
        .arg(&cpp)
        .arg("-o")
        .arg(&tmp)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cxx.display()))?;
    if !out.status.success() {
        // The sources stay for the user to look at.
        let kept = src.keep();
        return Err(format!(
            "{} could not build the kernel for the CPU model (sources kept in {}):\n{}",
            cxx.display(),
            kept.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let hash = cache::file_hash(&tmp).map_err(io)?;
    std::fs::rename(&tmp, &so).map_err(|e| format!("{}: {e}", so.display()))?;
    cache::write_atomic(&cache::hash_file(&so), hash.as_bytes())
        .map_err(|e| format!("{}: {e}", so.display()))?;
    Ok(so)
}

impl State {
    fn open() -> Result<State, PluginError> {
        let cxx = find_cxx().ok_or_else(|| {
            PluginError::new(
                ErrorCode::NoDevice,
                format!(
                    "the AscendC CPU execution model needs a C++ compiler: none found (set {CXX_VAR} or put g++ on PATH)"
                ),
            )
        })?;
        let version = Command::new(&cxx)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .map(str::to_string)
            })
            .ok_or_else(|| {
                PluginError::new(
                    ErrorCode::NoDevice,
                    format!("the C++ compiler {} does not run", cxx.display()),
                )
            })?;
        let target = targets::describe(targets::DEFAULT_TARGET)?;
        let engine = Engine::of(&target)?;
        let (build_dir, scratch) = match cache::user_cache_dir() {
            Some(dir) => (dir.map_err(internal)?, None),
            // No cache home: a private folder for this process only.
            None => {
                let dir = cache::private_tempdir("tilec-ascend-cpu-")
                    .map_err(|e| internal(format!("cannot create a build folder: {e}")))?;
                (dir.path().to_path_buf(), Some(dir))
            }
        };
        Ok(State {
            cxx,
            cxx_version: version,
            engine,
            next: 1,
            buffers: BTreeMap::new(),
            modules: BTreeMap::new(),
            build_dir,
            _scratch: scratch,
        })
    }

    fn handle_id(&mut self) -> u64 {
        let h = self.next;
        self.next += 1;
        h
    }

    fn handle(&mut self, request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        match request {
            RuntimeRequest::Devices => Ok(RuntimeResponse::Devices(vec![DeviceInfo {
                index: 0,
                name: device_name(targets::DEFAULT_TARGET),
                arch: targets::DEFAULT_TARGET.to_string(),
                memory_bytes: 16 << 30,
                driver: format!(
                    "{}: AscendC CPU execution model built with {}",
                    tilec_plugin_api::CPU_MODEL_DRIVER,
                    self.cxx_version
                ),
            }])),
            RuntimeRequest::Alloc { device, bytes } => {
                self.device(device)?;
                let n = usize::try_from(bytes).map_err(|_| bad("allocation too large"))?;
                let h = self.handle_id();
                self.buffers.insert(h, vec![0u8; n]);
                Ok(RuntimeResponse::Buffer(h))
            }
            RuntimeRequest::Free { buffer } => {
                self.buffers
                    .remove(&buffer)
                    .ok_or_else(|| bad(format!("no buffer with handle {buffer}")))?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::CopyToDevice {
                buffer,
                offset,
                data,
            } => {
                let b = self.range(buffer, offset, data.len() as u64)?;
                b.copy_from_slice(&data);
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::CopyToHost {
                buffer,
                offset,
                len,
            } => Ok(RuntimeResponse::Data(
                self.range(buffer, offset, len)?.to_vec(),
            )),
            RuntimeRequest::Load { device, artifact } => {
                self.device(device)?;
                self.load(&artifact)
            }
            RuntimeRequest::Launch { .. } => {
                self.launch(&request)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::Synchronize { device } => {
                self.device(device)?;
                Ok(RuntimeResponse::Done)
            }
            RuntimeRequest::Time {
                launch,
                warmup,
                repeat,
            } => {
                for _ in 0..warmup {
                    self.launch(&launch)?;
                }
                let mut times = Vec::new();
                for _ in 0..repeat {
                    let t = Instant::now();
                    self.launch(&launch)?;
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                Ok(RuntimeResponse::Times(times))
            }
        }
    }

    fn device(&self, device: u32) -> Result<(), PluginError> {
        if device != 0 {
            return Err(bad(format!(
                "no device {device} (the CPU model is device 0)"
            )));
        }
        Ok(())
    }

    fn range(&mut self, buffer: u64, offset: u64, len: u64) -> Result<&mut [u8], PluginError> {
        let b = self
            .buffers
            .get_mut(&buffer)
            .ok_or_else(|| bad(format!("no buffer with handle {buffer}")))?;
        let size = b.len() as u64;
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(&mut b[offset as usize..end as usize]),
            _ => Err(bad(format!(
                "bytes {offset}..{offset}+{len} lie outside buffer {buffer} of {size} bytes"
            ))),
        }
    }

    fn load(&mut self, artifact: &Artifact) -> Result<RuntimeResponse, PluginError> {
        let source = std::str::from_utf8(&artifact.bytes)
            .map_err(|_| bad(format!("`{}` is not AscendC source text", artifact.name)))?;
        let entries: BTreeMap<String, EntryInfo> = parse_entries(source)
            .into_iter()
            .map(|e| (e.entry.clone(), e))
            .collect();
        if entries.is_empty() {
            return Err(bad(format!(
                "`{}` has no kernels written by this backend",
                artifact.name
            )));
        }
        let so = build(&self.cxx, &self.engine, source, &self.build_dir).map_err(internal)?;
        let lib = dl::Library::open(&so).map_err(internal)?;
        let h = self.handle_id();
        self.modules.insert(h, Module { lib, entries });
        Ok(RuntimeResponse::Module(h))
    }

    fn launch(&mut self, request: &RuntimeRequest) -> Result<(), PluginError> {
        let RuntimeRequest::Launch {
            module,
            entry,
            grid,
            args,
            ..
        } = request
        else {
            return Err(bad("`Time` needs a `Launch` request to time"));
        };
        let m = self
            .modules
            .get(module)
            .ok_or_else(|| bad(format!("no module with handle {module}")))?;
        let info = m
            .entries
            .get(entry)
            .ok_or_else(|| bad(format!("the module has no kernel `{entry}`")))?;
        if info.buffers.len() != args.len() {
            return Err(bad(format!(
                "`{entry}` takes {} arguments, the launch passes {}",
                info.buffers.len(),
                args.len()
            )));
        }
        let mut tiling: Vec<u8> = Vec::new();
        for g in grid {
            tiling.extend_from_slice(&i64::from(*g).to_le_bytes());
        }
        let mut ptrs = Vec::new();
        for (i, (&is_buffer, &arg)) in info.buffers.iter().zip(args).enumerate() {
            if is_buffer {
                let b = self
                    .buffers
                    .get_mut(&arg)
                    .ok_or_else(|| bad(format!("argument {i} of `{entry}`: no buffer {arg}")))?;
                ptrs.push(b.as_mut_ptr());
            } else {
                tiling.extend_from_slice(&(arg as i64).to_le_bytes());
            }
        }
        let workspace = info.workspace;
        let blocks: u64 = grid.iter().map(|&g| u64::from(g)).product();
        if blocks == 0 {
            return Ok(());
        }
        let block_dim = u32::try_from(blocks.min(u64::from(self.engine.cores))).unwrap_or(1);
        // The scratch global memory the host stub's caller allocates: one
        // region per launched core.
        let bytes = workspace
            .checked_mul(u64::from(block_dim))
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| bad(format!("`{entry}` needs more workspace than this host has")))?;
        let mut scratch = vec![0xFFu8; bytes];
        if workspace > 0 {
            ptrs.push(scratch.as_mut_ptr());
        }
        let m = &self.modules[module];
        m.lib
            .launch(entry, block_dim, &mut ptrs, &mut tiling)
            .map_err(|e| internal(format!("kernel `{entry}`: {e}")))
    }
}
