//! The failure matrix of the plugin ABI (decision 10 of the plugin design):
//! one test for each way a plugin can be refused or misbehave, each
//! asserting the exact message a user sees, plus the working case and the
//! discovery rules.
//!
//! The plugins are variants of `tests/fixture-plugin`, a `cdylib` crate
//! outside the workspace. Each variant is built once per test run with
//! `cargo build --features X` into one shared target folder under
//! `CARGO_TARGET_TMPDIR` (so its dependencies build once), and its library
//! is copied to a file of its own right after the build, since every
//! variant produces the same file name. The copies and the scenario folders
//! belong to this run alone (a folder named by the process id): a loaded
//! library is never unloaded, so no file another run may have loaded is
//! ever rewritten.

use std::collections::HashMap;
use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tilec_core::interp::{self, Tensor};
use tilec_core::ir::{DType, Module};
use tilec_plugin_api::host::{
    CallError, LoadError, LoadedPlugin, LookupError, Registry, SearchPaths,
};
use tilec_plugin_api::{
    ABI_VERSION, Artifact, ArtifactKind, CompileOptions, CompileResult, DeviceInfo, ErrorCode,
    ParamMetadata, PluginError, RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT, Version,
};

/// One build of the fixture plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Variant {
    Working,
    Abi10,
    Abi20,
    NotAPlugin,
    PanicCompile,
    Garbage,
    OldIr,
    WrongNumerics,
    RefuseClaimed,
    Abi12,
    LayoutMismatch,
}

impl Variant {
    /// The fixture's cargo feature that selects the variant.
    fn feature(self) -> Option<&'static str> {
        match self {
            Variant::Working => None,
            Variant::Abi10 => Some("abi-1-0"),
            Variant::Abi20 => Some("abi-2-0"),
            Variant::NotAPlugin => Some("not-a-plugin"),
            Variant::PanicCompile => Some("panic-compile"),
            Variant::Garbage => Some("garbage"),
            Variant::OldIr => Some("old-ir"),
            Variant::WrongNumerics => Some("wrong-numerics"),
            Variant::RefuseClaimed => Some("refuse-claimed"),
            Variant::Abi12 => Some("abi-1-2"),
            Variant::LayoutMismatch => Some("layout-mismatch"),
        }
    }

    /// The file name of the variant's copy.
    fn file_name(self) -> String {
        let stem = self.feature().unwrap_or("working");
        format!("{DLL_PREFIX}fixture_{}{DLL_SUFFIX}", stem.replace('-', "_"))
    }
}

/// The message the `panic-compile` variant panics with.
const PANIC_MESSAGE: &str = "fixture: deliberate panic in compile";

/// A small module: one function with one kernel copying a buffer, in the
/// printer's canonical layout.
const IR: &str = "tile_ir 0.1

func @copy(%A: global f32[1024], %B: global f32[1024]) {
  kernel grid(8) threads(128) block(%bx) thread(%tx) {
    copy %A[%bx * 128 +: 128] -> %B[%bx * 128 +: 128]
  }
}
";

fn module() -> Module {
    let m = tilec_core::text::parse_module(IR).expect("the test IR parses");
    assert_eq!(
        tilec_core::text::print_module(&m),
        IR,
        "the test IR is canonical"
    );
    m
}

/// Everything this test writes.
fn work_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("failure-matrix")
}

/// This run's own folder, so that runs sharing a target folder never
/// touch each other's files. Folders of earlier runs untouched for over an
/// hour are removed on the way.
fn run_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let runs = work_dir().join("runs");
        if let Ok(entries) = fs::read_dir(&runs) {
            for entry in entries.filter_map(Result::ok) {
                let stale = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > Duration::from_secs(3600));
                if stale {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        runs.join(std::process::id().to_string())
    })
}

/// A fresh, empty folder for one scenario.
fn scenario(name: &str) -> PathBuf {
    let dir = run_dir().join(name);
    // Left over only if a process with this id ran before.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create a scenario folder");
    dir
}

/// A file with the shared-library suffix that holds no library.
fn write_corrupt(path: &Path) {
    fs::write(path, b"this is not a shared library\n\x00\x01\x02").expect("write a corrupt file");
}

/// Libraries built so far (or why the build failed), shared by the tests,
/// which run in parallel. Holding the lock also serializes the builds.
static BUILT: Mutex<Option<HashMap<Variant, Result<PathBuf, String>>>> = Mutex::new(None);

/// The library of `variant`, built on first use.
fn library(variant: Variant) -> PathBuf {
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    let result = built
        .get_or_insert_with(HashMap::new)
        .entry(variant)
        .or_insert_with(|| build(variant))
        .clone();
    match result {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

fn cargo_build(variant: Variant, target_dir: &Path, offline: bool) -> std::io::Result<Output> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture-plugin/Cargo.toml");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(manifest)
        .env("CARGO_TARGET_DIR", target_dir);
    if let Some(feature) = variant.feature() {
        cmd.args(["--features", feature]);
    }
    if offline {
        cmd.arg("--offline");
    }
    cmd.output()
}

/// Builds `variant` and copies its library to a file of its own.
fn build(variant: Variant) -> Result<PathBuf, String> {
    // Shared with the template test in `tools/tests/plugins.rs`, so the
    // plugins' dependencies build once per target dir.
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-builds");
    let failed =
        |e: &dyn std::fmt::Display| format!("building the fixture plugin ({variant:?}): {e}");
    // The workspace build that made this test fetched every crate the
    // fixture's lock file names, so `--offline` normally works; fall back
    // to the network if some crate is missing from the local cache.
    let mut out = cargo_build(variant, &target_dir, true).map_err(|e| failed(&e))?;
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("offline") {
        out = cargo_build(variant, &target_dir, false).map_err(|e| failed(&e))?;
    }
    if !out.status.success() {
        return Err(failed(&format!(
            "cargo failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let built = target_dir
        .join("debug")
        .join(format!("{DLL_PREFIX}tilec_fixture_plugin{DLL_SUFFIX}"));
    let libs = run_dir().join("libs");
    fs::create_dir_all(&libs).map_err(|e| failed(&e))?;
    let dest = libs.join(variant.file_name());
    fs::copy(&built, &dest).map_err(|e| failed(&e))?;
    Ok(dest)
}

/// Copies the library of `variant` to `dest`.
fn copy_library(variant: Variant, dest: &Path) {
    fs::copy(library(variant), dest).expect("copy a fixture library");
}

fn load(path: &Path) -> LoadedPlugin {
    LoadedPlugin::load(path, false).unwrap_or_else(|e| panic!("{e}"))
}

fn join_paths(paths: &[&Path]) -> OsString {
    std::env::join_paths(paths).expect("paths without separators")
}

#[test]
fn working_plugin_answers_every_call() {
    let path = library(Variant::Working);
    let plugin = load(&path);
    assert_eq!(plugin.path, path);
    assert!(!plugin.explicit);
    assert_eq!(plugin.name(), "fixture");
    assert_eq!(plugin.info.vendor, "tilec tests");
    assert_eq!(plugin.info.plugin_version, "0.1.0");
    assert_eq!(plugin.info.targets, ["t0"]);
    assert_eq!(plugin.info.default_target.as_deref(), Some("t0"));
    assert_eq!(plugin.info.ir_formats, (TILE_IR_FORMAT, TILE_IR_FORMAT));
    assert_eq!(plugin.abi, Version::new(1, 1));
    assert_eq!(plugin.abi, ABI_VERSION);
    assert!(plugin.has_runtime());

    let target = plugin.describe_target("t0").expect("describe t0");
    assert_eq!(target.arch, "t0");
    assert_eq!(target.threads_per_block.max_per_block, Some(1024));
    assert_eq!(target.simt_width(), Some(32));

    let err = plugin
        .describe_target("t9")
        .expect_err("t9 is not a target");
    assert!(
        matches!(&err, CallError::Plugin { error, .. } if error.code == ErrorCode::UnknownTarget),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "backend `fixture` refused: UnknownTarget: fixture has no target `t9` (it serves: t0)"
    );

    let result = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
    assert_eq!(result.artifacts.len(), 1);
    let artifact = &result.artifacts[0];
    assert_eq!(artifact.name, "module.tir");
    assert_eq!(artifact.kind, ArtifactKind::Text);
    let text = String::from_utf8(artifact.bytes.clone()).expect("UTF-8 artifact");
    assert!(text.contains("func @"), "{text}");
    assert_eq!(text, IR);
    assert_eq!(result.kernels.len(), 1);
    let kernel = &result.kernels[0];
    assert_eq!(kernel.entry, "copy");
    assert_eq!(kernel.grid, ["8"]);
    assert_eq!(kernel.threads, 128);
    let param = |name: &str| ParamMetadata {
        name: name.to_string(),
        dtype: "float32".to_string(),
        shape: vec!["1024".to_string()],
    };
    assert_eq!(kernel.params, [param("A"), param("B")]);
    assert!(result.diagnostics.is_empty());

    let err = plugin
        .compile(&module(), "t9", &CompileOptions::default())
        .expect_err("t9 is not a target");
    assert_eq!(
        err.to_string(),
        "backend `fixture` refused: UnknownTarget: fixture has no target `t9` (it serves: t0)"
    );

    // ABI 1.1 has the runtime call; the fixture has one CPU device.
    let devices = plugin
        .runtime(&RuntimeRequest::Devices)
        .expect("list devices");
    assert_eq!(
        devices,
        RuntimeResponse::Devices(vec![DeviceInfo {
            index: 0,
            name: "fixture cpu".to_string(),
            arch: "t0".to_string(),
            memory_bytes: 1 << 32,
            driver: "fixture 0.1.0".to_string(),
        }])
    );
    let buffer = alloc(&plugin, &[0; 16]);
    assert_ne!(buffer, 0);
    assert_eq!(read(&plugin, buffer, 16), [0; 16]);
    rt(&plugin, RuntimeRequest::Free { buffer });
}

#[test]
fn target_claims_what_the_corpus_needs() {
    let plugin = load(&library(Variant::Working));
    let target = plugin.describe_target("t0").expect("describe t0");
    let dtypes: Vec<&str> = DType::ALL.iter().map(|d| d.tilelang_name()).collect();
    assert_eq!(target.dtypes, dtypes);
    for profile in [
        "gemm.f16",
        "gemm.bf16",
        "gemm.f32",
        "gemm.fragment_operand",
        "atomic_add.f32",
    ] {
        assert!(target.profiles.iter().any(|p| p == profile), "{profile}");
    }
    for d in DType::ALL {
        let profile = format!("dtype.{}", d.short_name());
        assert!(target.profiles.contains(&profile), "{profile}");
    }
    assert!(!target.profiles.iter().any(|p| p == "gemm.f8e4m3"));
    let shared = target.memory_space("shared");
    assert_eq!(shared.and_then(|m| m.capacity_bytes), Some(48 << 10));
}

/// A small tiled gemm in TileLang: `C = A @ B`, f16 in, f32 accumulation.
/// `dtype` and the block sizes are `-D` defines of the tests.
const GEMM_PY: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=64, N=48, K=96, block_M=32, block_N=16, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
"#;

/// [`GEMM_PY`] staged with `defines` (`-D NAME=VALUE`).
fn gemm_module(defines: &[(&str, &str)]) -> Module {
    let options = tilec_core::front::py::Options {
        kernel: None,
        defines: defines
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        target: None,
    };
    let out = tilec_core::front::py::compile(GEMM_PY, &options);
    assert!(!out.has_errors(), "{:?}", out.diagnostics);
    out.module.expect("a module")
}

/// One runtime call that must succeed.
fn rt(plugin: &LoadedPlugin, request: RuntimeRequest) -> RuntimeResponse {
    plugin
        .runtime(&request)
        .unwrap_or_else(|e| panic!("{request:?}: {e}"))
}

/// One runtime call that the plugin must refuse; its error.
fn rt_err(plugin: &LoadedPlugin, request: RuntimeRequest) -> PluginError {
    match plugin.runtime(&request) {
        Err(CallError::Plugin { error, .. }) => error,
        other => panic!("{request:?}: expected a refusal, got {other:?}"),
    }
}

/// A new device buffer holding `bytes`.
fn alloc(plugin: &LoadedPlugin, bytes: &[u8]) -> u64 {
    let RuntimeResponse::Buffer(buffer) = rt(
        plugin,
        RuntimeRequest::Alloc {
            device: 0,
            bytes: bytes.len() as u64,
        },
    ) else {
        panic!("Alloc answers a buffer");
    };
    let done = rt(
        plugin,
        RuntimeRequest::CopyToDevice {
            buffer,
            offset: 0,
            data: bytes.to_vec(),
        },
    );
    assert_eq!(done, RuntimeResponse::Done);
    buffer
}

fn read(plugin: &LoadedPlugin, buffer: u64, len: usize) -> Vec<u8> {
    match rt(
        plugin,
        RuntimeRequest::CopyToHost {
            buffer,
            offset: 0,
            len: len as u64,
        },
    ) {
        RuntimeResponse::Data(data) => data,
        other => panic!("CopyToHost answered {other:?}"),
    }
}

fn load_module(plugin: &LoadedPlugin, result: &CompileResult) -> u64 {
    match rt(
        plugin,
        RuntimeRequest::Load {
            device: 0,
            artifact: result.artifacts[0].clone(),
        },
    ) {
        RuntimeResponse::Module(m) => m,
        other => panic!("Load answered {other:?}"),
    }
}

fn launch(module: u64, entry: &str, args: Vec<u64>) -> RuntimeRequest {
    RuntimeRequest::Launch {
        module,
        entry: entry.to_string(),
        grid: [1, 1, 1],
        threads: 128,
        shared_bytes: 0,
        args,
    }
}

/// Deterministic arguments of the gemm: small multiples of 1/4 (exact in
/// f16), and a zero output.
fn gemm_inputs(module: &Module) -> Vec<Tensor> {
    let func = &module.functions[0];
    let shapes = interp::param_shapes(func, &Default::default()).expect("constant shapes");
    func.params
        .iter()
        .zip(shapes)
        .enumerate()
        .map(|(i, (p, shape))| {
            let dtype = func.buffers[p.buffer].dtype;
            let n: usize = shape.iter().product();
            let values = (0..n)
                .map(|j| {
                    if i == 2 {
                        0.0
                    } else {
                        ((j * 7 + i) % 13) as f64 / 4.0 - 1.5
                    }
                })
                .collect();
            Tensor::from_f64(dtype, shape, values).expect("a tensor")
        })
        .collect()
}

/// Compiles the gemm with `plugin` and runs it on its CPU runtime the way
/// the conformance runner does; returns the output's bytes and what the
/// interpreter computes directly.
fn run_gemm_on(plugin: &LoadedPlugin) -> (Vec<u8>, Vec<u8>) {
    let module = gemm_module(&[]);
    let result = plugin
        .compile(&module, "t0", &CompileOptions::default())
        .expect("compile");
    assert_eq!(result.kernels.len(), 1);
    let kernel = &result.kernels[0];
    assert_eq!(kernel.entry, "main");
    assert_eq!(kernel.shared_bytes, (32 * 32 + 32 * 16) * 2);

    let inputs = gemm_inputs(&module);
    let buffers: Vec<u64> = inputs
        .iter()
        .map(|t| alloc(plugin, &t.to_le_bytes()))
        .collect();
    let loaded = load_module(plugin, &result);
    let done = rt(plugin, launch(loaded, &kernel.entry, buffers.clone()));
    assert_eq!(done, RuntimeResponse::Done);
    assert_eq!(
        rt(plugin, RuntimeRequest::Synchronize { device: 0 }),
        RuntimeResponse::Done
    );
    let out = read(plugin, buffers[2], 64 * 48 * 4);

    let mut expected = inputs.clone();
    interp::run(&module.functions[0], &mut expected).expect("the interpreter runs the gemm");
    // The inputs are unchanged.
    for i in 0..2 {
        let len = inputs[i].to_le_bytes().len();
        assert_eq!(read(plugin, buffers[i], len), inputs[i].to_le_bytes());
    }
    for buffer in buffers {
        rt(plugin, RuntimeRequest::Free { buffer });
    }
    (out, expected[2].to_le_bytes())
}

#[test]
fn cpu_runtime_runs_a_kernel() {
    let plugin = load(&library(Variant::Working));
    let (out, expected) = run_gemm_on(&plugin);
    assert_eq!(out.len(), 64 * 48 * 4);
    assert!(out.iter().any(|&b| b != 0), "the gemm wrote its output");
    assert_eq!(out, expected);

    // The text module of the other tests: a copy kernel, loaded from the
    // artifact of a compile, with a buffer larger than the parameter.
    let result = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
    let loaded = load_module(&plugin, &result);
    let a: Vec<u8> = (0..1024u32)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let a = alloc(&plugin, &a);
    let b = alloc(&plugin, &[0xAB; 4096 + 8]);
    rt(&plugin, launch(loaded, "copy", vec![a, b]));
    let copied = read(&plugin, b, 4096 + 8);
    assert_eq!(copied[..4096], read(&plugin, a, 4096)[..]);
    assert_eq!(
        copied[4096..],
        [0xAB; 8],
        "bytes past the parameter are kept"
    );

    // Timing is not implemented.
    let err = rt_err(
        &plugin,
        RuntimeRequest::Time {
            launch: Box::new(launch(loaded, "copy", vec![a, b])),
            warmup: 1,
            repeat: 3,
        },
    );
    assert_eq!(err.code, ErrorCode::Unimplemented);
    assert_eq!(err.message, "fixture cpu runtime does not time kernels");
}

#[test]
fn cpu_runtime_refuses_bad_requests() {
    let plugin = load(&library(Variant::Working));
    let bad = |request: RuntimeRequest| {
        let err = rt_err(&plugin, request.clone());
        assert_eq!(err.code, ErrorCode::BadRequest, "{request:?}: {err:?}");
        err.message
    };
    let buffer = alloc(&plugin, &[1, 2, 3, 4]);
    let unknown = u64::MAX;
    assert_eq!(
        bad(RuntimeRequest::Free { buffer: unknown }),
        format!("fixture cpu runtime has no buffer {unknown}")
    );
    bad(RuntimeRequest::CopyToHost {
        buffer: unknown,
        offset: 0,
        len: 1,
    });
    bad(RuntimeRequest::CopyToDevice {
        buffer: unknown,
        offset: 0,
        data: vec![1],
    });
    assert_eq!(
        bad(RuntimeRequest::CopyToHost {
            buffer,
            offset: 2,
            len: 3,
        }),
        format!("bytes 2..2+3 are outside buffer {buffer} (4 bytes)")
    );
    bad(RuntimeRequest::CopyToHost {
        buffer,
        offset: u64::MAX,
        len: 2,
    });
    bad(RuntimeRequest::CopyToDevice {
        buffer,
        offset: 3,
        data: vec![0, 0],
    });
    assert_eq!(
        bad(RuntimeRequest::Alloc {
            device: 1,
            bytes: 4
        }),
        "fixture cpu runtime has no device 1 (it has device 0)"
    );
    bad(RuntimeRequest::Alloc {
        device: 0,
        bytes: u64::MAX,
    });
    bad(RuntimeRequest::Synchronize { device: 7 });
    bad(launch(unknown, "copy", vec![buffer, buffer]));

    // A bad artifact is invalid IR.
    let err = rt_err(
        &plugin,
        RuntimeRequest::Load {
            device: 0,
            artifact: Artifact {
                name: "module.tir".to_string(),
                kind: ArtifactKind::Text,
                bytes: b"not tile ir".to_vec(),
            },
        },
    );
    assert_eq!(err.code, ErrorCode::InvalidIr, "{err:?}");

    let result = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
    let loaded = load_module(&plugin, &result);
    let a = alloc(&plugin, &[0; 4096]);
    assert_eq!(
        bad(launch(loaded, "nope", vec![a, a])),
        format!("module {loaded} has no function `nope`")
    );
    bad(launch(loaded, "copy", vec![a]));
    bad(launch(loaded, "copy", vec![a, unknown]));
    // `buffer` holds 4 bytes, the parameter needs 4096.
    assert_eq!(
        bad(launch(loaded, "copy", vec![a, buffer])),
        format!("buffer {buffer} (4 bytes) is too small for parameter `B` (f32[1024])")
    );
    // Nothing was freed or written by the refusals.
    assert_eq!(read(&plugin, buffer, 4), [1, 2, 3, 4]);
    rt(&plugin, RuntimeRequest::Free { buffer });
    bad(RuntimeRequest::Free { buffer });
}

#[test]
fn compile_refuses_what_t0_does_not_claim() {
    let plugin = load(&library(Variant::Working));
    let refusal = |module: &Module| match plugin.compile(module, "t0", &CompileOptions::default()) {
        Err(CallError::Plugin { error, .. }) => error,
        other => panic!("expected a refusal, got {other:?}"),
    };

    let fp8 = gemm_module(&[("dtype", "\"float8_e4m3\"")]);
    let err = refusal(&fp8);
    assert_eq!(err.code, ErrorCode::UnsupportedDtype, "{err:?}");
    assert_eq!(
        err.message,
        "target t0 has no gemm on float8_e4m3fn operands (`A_shared` in `main`)"
    );
    let location = err.diagnostics[0].location.as_ref().expect("a location");
    assert_eq!(location.function, "main");
    let start = location.span.start as usize;
    assert!(
        GEMM_PY[start..].starts_with("T.gemm("),
        "{:?}",
        location.span
    );

    // 128·128 + 128·128 f16 elements: 64 KiB of shared tiles, over 48 KiB.
    let big = gemm_module(&[("block_M", "128"), ("block_N", "128"), ("block_K", "128")]);
    let err = refusal(&big);
    assert_eq!(err.code, ErrorCode::UnsupportedFeature, "{err:?}");
    assert_eq!(
        err.message,
        "`main` uses 65536 bytes of shared memory, more than the 49152 bytes target t0 has"
    );
    let location = err.diagnostics[0].location.as_ref().expect("a location");
    let start = location.span.start as usize;
    assert!(
        GEMM_PY[..start].ends_with("B_shared = ")
            && GEMM_PY[start..].starts_with("T.alloc_shared("),
        "{:?}",
        location.span
    );
    // 128·128 + 128·64 f16 elements: exactly 48 KiB, which fits.
    let full = gemm_module(&[("block_M", "128"), ("block_N", "64"), ("block_K", "128")]);
    let result = plugin
        .compile(&full, "t0", &CompileOptions::default())
        .expect("48 KiB of shared memory fit");
    assert_eq!(result.kernels[0].shared_bytes, 48 << 10);
}

#[test]
fn wrong_numerics_variant_changes_a_result() {
    let plugin = load(&library(Variant::WrongNumerics));
    let (out, expected) = run_gemm_on(&plugin);
    assert_ne!(out, expected);
    // Exactly the first element differs: it became 1.0 (or 2.0).
    assert_eq!(out[4..], expected[4..]);
    let first = f32::from_le_bytes([out[0], out[1], out[2], out[3]]);
    let correct = f32::from_le_bytes([expected[0], expected[1], expected[2], expected[3]]);
    assert_eq!(first, if correct == 1.0 { 2.0 } else { 1.0 });
}

#[test]
fn refuse_claimed_variant_refuses_gemm() {
    let plugin = load(&library(Variant::RefuseClaimed));
    let target = plugin.describe_target("t0").expect("describe t0");
    assert!(target.profiles.iter().any(|p| p == "gemm.f16"));
    let err = plugin
        .compile(&gemm_module(&[]), "t0", &CompileOptions::default())
        .expect_err("gemm is refused");
    assert_eq!(
        err.to_string(),
        "backend `fixture` refused: UnsupportedFeature: gemm is not implemented"
    );
    // A module without a gemm still compiles.
    plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
}

#[test]
fn incompatible_abi_major_is_refused() {
    let path = library(Variant::Abi20);
    let err = LoadedPlugin::load(&path, false).expect_err("ABI 2.0 must be refused");
    assert_eq!(
        err,
        LoadError::AbiMajor {
            path: path.clone(),
            plugin: "2.0".to_string(),
            host: Version::new(1, 1),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` was built for tilec plugin ABI 2.0, but this tilec speaks ABI 1.1; \
             rebuild the plugin against tilec-plugin-api 1.x",
            path.display()
        )
    );
}

#[test]
fn older_minor_loads_without_its_missing_functions() {
    let plugin = load(&library(Variant::Abi10));
    assert_eq!(plugin.abi, Version::new(1, 0));
    // It claims a runtime, but its root module has no `runtime` call.
    assert!(plugin.info.has_runtime);
    assert!(!plugin.has_runtime());
    let err = plugin
        .runtime(&RuntimeRequest::Devices)
        .expect_err("ABI 1.0 has no runtime call");
    assert_eq!(
        err,
        CallError::Unavailable {
            plugin: "fixture".to_string(),
            call: "runtime",
            since: Version::new(1, 1),
            plugin_abi: Version::new(1, 0),
        }
    );
    assert_eq!(
        err.to_string(),
        "backend `fixture` was built for plugin ABI 1.0 and has no `runtime` call (added in ABI 1.1)"
    );
    // The calls of ABI 1.0 still work.
    let result = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
    assert_eq!(result.artifacts[0].bytes, IR.as_bytes());
}

#[test]
fn ir_newer_than_the_plugin_reads_is_refused() {
    let plugin = load(&library(Variant::OldIr));
    assert_eq!(
        plugin.info.ir_formats,
        (Version::new(0, 0), Version::new(0, 0))
    );
    let err = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect_err("the current IR is too new");
    assert_eq!(
        err,
        CallError::IrTooNew {
            plugin: "fixture".to_string(),
            min: Version::new(0, 0),
            max: Version::new(0, 0),
            needs: TILE_IR_FORMAT,
        }
    );
    assert_eq!(
        err.to_string(),
        "backend `fixture` reads Tile IR 0.0 to 0.0, but this kernel needs Tile IR ≥ 0.11; update the plugin"
    );
    // Nothing else is affected.
    plugin.describe_target("t0").expect("describe t0");
}

#[test]
fn missing_file_is_reported() {
    let path = scenario("missing").join(format!("{DLL_PREFIX}absent{DLL_SUFFIX}"));
    let err = LoadedPlugin::load(&path, true).expect_err("no such file");
    assert_eq!(err, LoadError::Missing { path: path.clone() });
    assert_eq!(
        err.to_string(),
        format!("plugin file `{}` does not exist", path.display())
    );
}

#[test]
fn library_without_the_root_module_is_not_a_plugin() {
    let path = library(Variant::NotAPlugin);
    let err = LoadedPlugin::load(&path, false).expect_err("not a plugin");
    assert_eq!(err, LoadError::NotAPlugin { path: path.clone() });
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` is not a tilec plugin: it does not export the `tilec_backend` root module",
            path.display()
        )
    );
}

#[test]
fn corrupt_library_cannot_be_opened() {
    let path = scenario("corrupt").join(format!("{DLL_PREFIX}corrupt{DLL_SUFFIX}"));
    write_corrupt(&path);
    let err = LoadedPlugin::load(&path, false).expect_err("corrupt");
    // Refused before the system loader sees it.
    assert_eq!(
        err,
        LoadError::Incomplete {
            path: path.clone(),
            reason: "it is not an ELF file (32 bytes without the ELF magic number)".to_string(),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` is not a complete shared object: it is not an ELF file \
             (32 bytes without the ELF magic number)",
            path.display()
        )
    );
}

#[test]
fn panic_in_compile_is_contained() {
    let plugin = load(&library(Variant::PanicCompile));
    let expected = CallError::Panic {
        plugin: "fixture".to_string(),
        call: "compile",
        message: PANIC_MESSAGE.to_string(),
    };
    // (The plugin's own panic hook prints the panic to stderr: that line in
    // the test output is expected.)
    let err = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect_err("compile panics");
    assert_eq!(err, expected);
    assert_eq!(
        err.to_string(),
        "backend `fixture` panicked in `compile`: fixture: deliberate panic in compile"
    );
    // The host and the plugin survive: other calls work, and the same
    // panic is contained again.
    let target = plugin
        .describe_target("t0")
        .expect("describe after a panic");
    assert_eq!(target.arch, "t0");
    let again = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect_err("compile panics again");
    assert_eq!(again, expected);
}

#[test]
fn malformed_answer_is_reported() {
    let plugin = load(&library(Variant::Garbage));
    let err = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect_err("garbage bytes");
    assert!(
        matches!(&err, CallError::Malformed { plugin, call: "compile", .. } if plugin == "fixture"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "backend `fixture` returned malformed bytes from `compile`: \
         the bytes are not a tilec document (no `TLCD` header and not JSON)"
    );
    let err = plugin
        .runtime(&RuntimeRequest::Devices)
        .expect_err("garbage bytes");
    assert_eq!(
        err.to_string(),
        "backend `fixture` returned malformed bytes from `runtime`: \
         the bytes are not a tilec document (no `TLCD` header and not JSON)"
    );
    // Its well-formed calls still work.
    plugin.describe_target("t0").expect("describe t0");
}

#[test]
fn two_plugins_claiming_one_backend_name() {
    let a = scenario("duplicate/a");
    let b = scenario("duplicate/b");
    let a_lib = a.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"));
    let b_lib = b.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"));
    copy_library(Variant::Working, &a_lib);
    copy_library(Variant::Working, &b_lib);
    let env = join_paths(&[&a, &b]);

    let registry = Registry::discover(&SearchPaths {
        env: Some(env.clone()),
        ..SearchPaths::default()
    });
    assert!(registry.failures.is_empty(), "{:?}", registry.failures);
    assert_eq!(registry.plugins.len(), 2);
    let err = registry.find("fixture").expect_err("two claims");
    assert_eq!(
        err,
        LookupError::Duplicate {
            name: "fixture".to_string(),
            first: a_lib.clone(),
            second: b_lib.clone(),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "two plugins claim backend `fixture`: `{}` and `{}`; \
             choose one with `--plugin PATH` or remove the other",
            a_lib.display(),
            b_lib.display()
        )
    );

    // Given explicitly, one of them wins (and is not loaded a second time
    // when the search reaches its folder).
    let registry = Registry::discover(&SearchPaths {
        explicit: vec![b_lib.clone()],
        env: Some(env),
        exe_dir: None,
    });
    assert!(registry.failures.is_empty(), "{:?}", registry.failures);
    let paths: Vec<(&Path, bool)> = registry
        .plugins
        .iter()
        .map(|p| (p.path.as_path(), p.explicit))
        .collect();
    assert_eq!(paths, [(b_lib.as_path(), true), (a_lib.as_path(), false)]);
    let found = registry.find("fixture").expect("the explicit one");
    assert_eq!(found.path, b_lib);
    assert!(found.explicit);
}

#[test]
fn search_order_is_explicit_env_exe_then_prefix() {
    let root = scenario("order");
    let touch = |dir: &Path, name: &str| {
        fs::create_dir_all(dir).expect("create a folder");
        let path = dir.join(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}"));
        fs::write(&path, b"").expect("write a file");
        path
    };
    let explicit = root.join(format!("{DLL_PREFIX}explicit{DLL_SUFFIX}"));
    let env_dir = root.join("env");
    // Created out of order: folder listings are sorted.
    let env_b = touch(&env_dir, "b");
    let env_a = touch(&env_dir, "a");
    fs::write(env_dir.join("README.txt"), b"not a library").expect("write a file");
    fs::create_dir_all(env_dir.join(format!("folder{DLL_SUFFIX}"))).expect("create a folder");
    let env_file = touch(&root.join("single"), "single");
    let exe_dir = root.join("prefix").join("bin");
    let next_to_exe = touch(&exe_dir.join("plugins"), "next_to_exe");
    let in_prefix = touch(
        &root
            .join("prefix")
            .join("lib")
            .join("tilec")
            .join("plugins"),
        "in_prefix",
    );

    let paths = SearchPaths {
        explicit: vec![explicit.clone()],
        env: Some(join_paths(&[&env_dir, Path::new(""), &env_file])),
        exe_dir: Some(exe_dir),
    };
    assert_eq!(
        paths.candidates(),
        [
            (explicit, true),
            (env_a, false),
            (env_b, false),
            (env_file, false),
            (next_to_exe, false),
            (in_prefix, false),
        ]
    );
}

#[test]
fn discovery_is_sorted_and_loads_a_file_once() {
    let dir = scenario("discovery");
    let lib = |name: &str| dir.join(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}"));
    // Created out of order: folders are scanned sorted.
    copy_library(Variant::Working, &lib("20_working"));
    write_corrupt(&lib("15_corrupt"));
    copy_library(Variant::Abi10, &lib("10_abi_1_0"));

    // The working plugin is reached three times: as a file, through the
    // folder, and through a second spelling of its path.
    let respelled = dir
        .join(".")
        .join(format!("{DLL_PREFIX}20_working{DLL_SUFFIX}"));
    let paths = SearchPaths {
        explicit: Vec::new(),
        env: Some(join_paths(&[&lib("20_working"), &dir, &respelled])),
        exe_dir: None,
    };
    assert_eq!(
        paths.candidates(),
        [
            (lib("20_working"), false),
            (lib("10_abi_1_0"), false),
            (lib("15_corrupt"), false),
            (lib("20_working"), false),
            (respelled, false),
        ]
    );

    let registry = Registry::discover(&paths);
    let loaded: Vec<(&Path, Version)> = registry
        .plugins
        .iter()
        .map(|p| (p.path.as_path(), p.abi))
        .collect();
    assert_eq!(
        loaded,
        [
            (lib("20_working").as_path(), Version::new(1, 1)),
            (lib("10_abi_1_0").as_path(), Version::new(1, 0)),
        ]
    );
    assert_eq!(registry.failures.len(), 1);
    let (failed, err) = &registry.failures[0];
    assert_eq!(failed, &lib("15_corrupt"));
    assert!(matches!(err, LoadError::Incomplete { .. }), "{err:?}");

    let err = registry.find("cuda").expect_err("no such backend");
    assert_eq!(
        err.to_string(),
        "backend `cuda` is not available: no plugin provides it (available: fixture)"
    );

    // The same search again gives the same answer.
    let again = Registry::discover(&paths);
    let again: Vec<&Path> = again.plugins.iter().map(|p| p.path.as_path()).collect();
    assert_eq!(again, [lib("20_working"), lib("10_abi_1_0")]);
}

/// A copy of the working library cut to `keep` of its bytes.
fn write_truncated(dest: &Path, keep: f64) {
    let bytes = fs::read(library(Variant::Working)).expect("read the working library");
    let len = (bytes.len() as f64 * keep) as usize;
    fs::write(dest, &bytes[..len]).expect("write a truncated library");
}

#[test]
fn truncated_library_is_refused_before_it_is_opened() {
    // The system loader maps segments past the end of a truncated file,
    // and the first touch kills the process with SIGBUS: the file must be
    // refused before it reaches the loader.
    let dir = scenario("truncated");
    let lib = dir.join(format!("{DLL_PREFIX}truncated{DLL_SUFFIX}"));
    write_truncated(&lib, 0.5);
    let err = LoadedPlugin::load(&lib, true).expect_err("a truncated library");
    let LoadError::Incomplete { path, reason } = &err else {
        panic!("expected LoadError::Incomplete, got {err:?}");
    };
    assert_eq!(path, &lib);
    assert!(reason.contains("past the end of the file"), "{reason}");
    assert!(
        err.to_string().starts_with(&format!(
            "`{}` is not a complete shared object: ",
            lib.display()
        )),
        "{err}"
    );

    // Only the ELF header left: the program headers are cut off.
    write_truncated(&lib, 0.0001);
    let err = LoadedPlugin::load(&lib, true).expect_err("a cut header");
    assert!(matches!(err, LoadError::Incomplete { .. }), "{err:?}");

    // In a searched folder it is listed as a failure and skipped.
    copy_library(
        Variant::Working,
        &dir.join(format!("{DLL_PREFIX}working{DLL_SUFFIX}")),
    );
    write_truncated(&lib, 0.5);
    let registry = Registry::discover(&SearchPaths {
        env: Some(join_paths(&[&dir])),
        ..SearchPaths::default()
    });
    assert_eq!(registry.plugins.len(), 1);
    assert_eq!(registry.plugins[0].name(), "fixture");
    assert_eq!(registry.failures.len(), 1);
    assert_eq!(registry.failures[0].0, lib);
    assert!(
        matches!(registry.failures[0].1, LoadError::Incomplete { .. }),
        "{:?}",
        registry.failures
    );
}

#[test]
fn library_of_another_kind_is_refused() {
    let dir = scenario("foreign");
    let lib = dir.join(format!("{DLL_PREFIX}foreign{DLL_SUFFIX}"));
    let mut bytes = fs::read(library(Variant::Working)).expect("read the working library");
    // e_machine (bytes 18..20, little-endian): EM_CUDA (190).
    bytes[18..20].copy_from_slice(&190u16.to_le_bytes());
    fs::write(&lib, &bytes).expect("write");
    let err = LoadedPlugin::load(&lib, true).expect_err("another machine");
    assert!(
        err.to_string().ends_with(&format!(
            "is a shared object for CUDA, not for this machine ({})",
            std::env::consts::ARCH
        )),
        "{err}"
    );
    // e_type (bytes 16..18): ET_EXEC (2), an executable.
    let mut bytes = fs::read(library(Variant::Working)).expect("read the working library");
    bytes[16..18].copy_from_slice(&2u16.to_le_bytes());
    fs::write(&lib, &bytes).expect("write");
    let err = LoadedPlugin::load(&lib, true).expect_err("an executable");
    assert!(
        err.to_string().ends_with(
            "is not a complete shared object: its ELF type is not a shared object (ET_DYN)"
        ),
        "{err}"
    );
}

#[test]
fn plugin_paths_are_made_absolute_and_canonical() {
    // The path kept (and hashed by the conformance report) is the file the
    // loader opened: absolute, without symbolic links.
    let dir = scenario("canonical");
    let real = dir.join(format!("{DLL_PREFIX}real{DLL_SUFFIX}"));
    copy_library(Variant::Working, &real);
    let link = dir.join(format!("{DLL_PREFIX}link{DLL_SUFFIX}"));
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let plugin = LoadedPlugin::load(&link, true).expect("loads through the link");
    assert_eq!(plugin.path, fs::canonicalize(&real).expect("canonical"));
    assert!(plugin.path.is_absolute());

    // A symbolic link beside its target in a searched folder: one plugin,
    // no duplicate claim of its name.
    let registry = Registry::discover(&SearchPaths {
        env: Some(join_paths(&[&dir])),
        ..SearchPaths::default()
    });
    assert!(registry.failures.is_empty(), "{:?}", registry.failures);
    assert_eq!(registry.plugins.len(), 1);
    assert_eq!(
        registry.find("fixture").expect("one claim").path,
        plugin.path
    );
}

#[test]
fn relative_plugin_path_entries_are_ignored() {
    let dir = scenario("relative");
    let lib = dir.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"));
    copy_library(Variant::Working, &lib);
    let paths = SearchPaths {
        env: Some(join_paths(&[
            Path::new("plugins"),
            &dir,
            Path::new("./libx.so"),
        ])),
        ..SearchPaths::default()
    };
    assert_eq!(
        paths.relative_env_entries(),
        [PathBuf::from("plugins"), PathBuf::from("./libx.so")]
    );
    assert_eq!(paths.candidates(), [(lib, false)]);
}

#[test]
fn backend_names_are_checked() {
    use tilec_plugin_api::host::name_problem;
    for ok in ["cuda", "rocm", "my_backend-2", "fixture"] {
        assert_eq!(name_problem(ok), None, "{ok}");
    }
    assert_eq!(name_problem("").as_deref(), Some("is empty"));
    for reserved in ["ref", "sim", "auto"] {
        assert_eq!(
            name_problem(reserved).as_deref(),
            Some("is reserved for tilec's own backends")
        );
    }
    assert_eq!(
        name_problem("../x").as_deref(),
        Some("has the character '.'; a backend name uses only `a-z`, `0-9`, `_` and `-`")
    );
    assert!(name_problem("Cuda").is_some());
    assert!(name_problem(&"x".repeat(33)).is_some());
    assert!(name_problem(&"x".repeat(32)).is_none());
}

/// Runs the test `name` of this binary again in a child process with the
/// environment `env` (for the fixture's knobs, read when it is loaded) and
/// asserts that it passes there. Returns whether this is the child.
fn in_child(name: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env("FAILURE_MATRIX_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("start the test binary");
    assert!(
        out.status.success(),
        "the child run of `{name}` failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

#[test]
fn reserved_backend_name_is_refused() {
    // Built before the child runs, so that the child only loads.
    let lib = library(Variant::Working);
    for name in ["ref", "sim", "auto", "", "../x"] {
        let dir = scenario(&format!("reserved-{}", name.replace(['.', '/'], "_")));
        let copy = dir.join(format!("{DLL_PREFIX}named{DLL_SUFFIX}"));
        fs::copy(&lib, &copy).expect("copy");
        if !in_child(
            "reserved_backend_name_is_refused",
            &[
                ("TILEC_FIXTURE_NAME", name),
                ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
            ],
        ) {
            continue;
        }
        let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
        let name = std::env::var("TILEC_FIXTURE_NAME").expect("the name");
        let err = LoadedPlugin::load(&copy, true).expect_err("a reserved or malformed name");
        let LoadError::BadName { path, name: n, .. } = &err else {
            panic!("expected LoadError::BadName, got {err:?}");
        };
        assert_eq!(path, &copy);
        assert_eq!(n, &name);
        assert!(
            err.to_string().starts_with(&format!(
                "plugin `{}` calls its backend `{name}`, which ",
                copy.display()
            )),
            "{err}"
        );
        return;
    }
}

/// In a child process with `TILEC_FIXTURE_PANIC=call` (see [`in_child`]):
/// a copy of the working library, loaded.
fn panicking(test: &str, call: &str) -> Option<Result<LoadedPlugin, LoadError>> {
    let lib = library(Variant::Working);
    let copy = scenario(&format!("panic-{call}")).join(format!("{DLL_PREFIX}p{DLL_SUFFIX}"));
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_none() {
        fs::copy(&lib, &copy).expect("copy");
    }
    if !in_child(
        test,
        &[
            ("TILEC_FIXTURE_PANIC", call),
            ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
        ],
    ) {
        return None;
    }
    let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
    Some(LoadedPlugin::load(&copy, true))
}

#[test]
fn panic_in_info_refuses_the_plugin() {
    let Some(loaded) = panicking("panic_in_info_refuses_the_plugin", "info") else {
        return;
    };
    let err = loaded.expect_err("info panics");
    let LoadError::BadInfo { reason, .. } = &err else {
        panic!("expected LoadError::BadInfo, got {err:?}");
    };
    assert_eq!(reason, "Panic: fixture: deliberate panic in info");
}

#[test]
fn panic_in_describe_target_is_contained() {
    let Some(loaded) = panicking("panic_in_describe_target_is_contained", "describe_target") else {
        return;
    };
    let plugin = loaded.expect("loads");
    let err = plugin.describe_target("t0").expect_err("panics");
    assert_eq!(
        err.to_string(),
        "backend `fixture` panicked in `describe_target`: fixture: deliberate panic in describe_target"
    );
    // Other calls still work.
    plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile after a panic");
}

#[test]
fn panic_in_runtime_is_contained() {
    let Some(loaded) = panicking("panic_in_runtime_is_contained", "runtime") else {
        return;
    };
    let plugin = loaded.expect("loads");
    let err = plugin
        .runtime(&RuntimeRequest::Devices)
        .expect_err("panics");
    assert_eq!(
        err.to_string(),
        "backend `fixture` panicked in `runtime`: fixture: deliberate panic in runtime"
    );
    plugin
        .describe_target("t0")
        .expect("describe after a panic");
}

#[test]
fn ir_older_than_the_plugin_reads_is_refused() {
    // The plugin reads only Tile IR formats newer than the host writes.
    let lib = library(Variant::Working);
    let copy = scenario("new-ir").join(format!("{DLL_PREFIX}new_ir{DLL_SUFFIX}"));
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_none() {
        fs::copy(&lib, &copy).expect("copy");
    }
    if !in_child(
        "ir_older_than_the_plugin_reads_is_refused",
        &[
            ("TILEC_FIXTURE_IR", "99.0-99.1"),
            ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
        ],
    ) {
        return;
    }
    let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
    let plugin = load(&copy);
    let err = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect_err("the host's IR is too old");
    assert_eq!(
        err,
        CallError::IrTooOld {
            plugin: "fixture".to_string(),
            min: Version::new(99, 0),
            max: Version::new(99, 1),
            writes: TILE_IR_FORMAT,
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "backend `fixture` reads Tile IR 99.0 to 99.1, but this tilec writes Tile IR {TILE_IR_FORMAT}; update tilec"
        )
    );
}

#[test]
fn newer_minor_loads_and_works() {
    // Built for ABI 1.2, with a call this host does not know: it loads,
    // and every call of ABI 1.1 works.
    let plugin = load(&library(Variant::Abi12));
    assert_eq!(plugin.abi, Version::new(1, 2));
    assert!(plugin.has_runtime());
    let result = plugin
        .compile(&module(), "t0", &CompileOptions::default())
        .expect("compile");
    assert_eq!(result.artifacts[0].bytes, IR.as_bytes());
    let RuntimeResponse::Devices(devices) = rt(&plugin, RuntimeRequest::Devices) else {
        panic!("expected devices");
    };
    assert_eq!(devices.len(), 1);
}

#[test]
fn layout_mismatch_is_refused_at_load() {
    let path = library(Variant::LayoutMismatch);
    let err = LoadedPlugin::load(&path, false).expect_err("a layout mismatch");
    let LoadError::Layout { path: p, detail } = &err else {
        panic!("expected LoadError::Layout, got {err:?}");
    };
    assert_eq!(p, &path);
    assert_eq!(
        detail,
        "incompatible type size (expected 4, found 6); too many fields (expected 2, found 3)"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` has a plugin interface layout this tilec does not understand: {detail}",
            path.display()
        )
    );
}

#[test]
fn malformed_info_refuses_the_plugin() {
    let lib = library(Variant::Garbage);
    let copy = scenario("garbage-info").join(format!("{DLL_PREFIX}g{DLL_SUFFIX}"));
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_none() {
        fs::copy(&lib, &copy).expect("copy");
    }
    if !in_child(
        "malformed_info_refuses_the_plugin",
        &[
            ("TILEC_FIXTURE_GARBAGE_INFO", "1"),
            ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
        ],
    ) {
        return;
    }
    let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
    let err = LoadedPlugin::load(&copy, true).expect_err("malformed info");
    assert_eq!(
        err.to_string(),
        format!(
            "plugin `{}` returned malformed information about itself: \
             the bytes are not a tilec document (no `TLCD` header and not JSON)",
            copy.display()
        )
    );
}

#[test]
fn target_description_0_1_is_refused() {
    let lib = library(Variant::Garbage);
    let copy = scenario("target-0-1").join(format!("{DLL_PREFIX}t01{DLL_SUFFIX}"));
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_none() {
        fs::copy(&lib, &copy).expect("copy");
    }
    if !in_child(
        "target_description_0_1_is_refused",
        &[
            ("TILEC_FIXTURE_TARGET_0_1", "1"),
            ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
        ],
    ) {
        return;
    }
    let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
    let plugin = load(&copy);
    let err = plugin.describe_target("t0").expect_err("a 0.1 description");
    assert_eq!(
        err.to_string(),
        "backend `fixture` returned malformed bytes from `describe_target`: \
         `target-description` document version 0.1 cannot be read by this build, \
         which reads 1.1 (same major, minor up to 1.1)"
    );
}

#[test]
fn a_search_for_another_backend_loads_no_library_that_declares_its_name() {
    // The fixture declares its name (`BackendPlugin::NAME`) in its file:
    // looking for another backend checks it but never loads it.
    let dir = scenario("declared");
    let lib = dir.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"));
    copy_library(Variant::Working, &lib);
    write_truncated(&dir.join(format!("{DLL_PREFIX}zz_cut{DLL_SUFFIX}")), 0.5);
    let paths = SearchPaths {
        env: Some(join_paths(&[&dir])),
        ..SearchPaths::default()
    };
    let registry = Registry::discover_for(&paths, "cuda");
    assert!(registry.plugins.is_empty());
    assert_eq!(registry.skipped, [(lib.clone(), "fixture".to_string())]);
    assert_eq!(registry.failures.len(), 1, "{:?}", registry.failures);
    assert_eq!(
        registry.find("cuda").expect_err("not there").to_string(),
        "backend `cuda` is not available: no plugin provides it (available: fixture)"
    );
    let registry = Registry::discover_for(&paths, "fixture");
    assert_eq!(registry.plugins.len(), 1);
    assert!(registry.skipped.is_empty());
    assert_eq!(registry.find("fixture").expect("loaded").path, lib);
}

#[test]
fn a_name_other_than_the_declared_one_is_refused() {
    let lib = library(Variant::Working);
    let copy = scenario("undeclared").join(format!("{DLL_PREFIX}u{DLL_SUFFIX}"));
    if std::env::var_os("FAILURE_MATRIX_CHILD").is_none() {
        fs::copy(&lib, &copy).expect("copy");
    }
    if !in_child(
        "a_name_other_than_the_declared_one_is_refused",
        &[
            ("TILEC_FIXTURE_NAME", "other"),
            ("FAILURE_MATRIX_LIB", copy.to_str().expect("UTF-8 path")),
        ],
    ) {
        return;
    }
    let copy = PathBuf::from(std::env::var("FAILURE_MATRIX_LIB").expect("the library"));
    let err = LoadedPlugin::load(&copy, true).expect_err("another name");
    assert_eq!(
        err.to_string(),
        format!(
            "plugin `{}` calls its backend `other`, which is not the name `fixture` its file declares",
            copy.display()
        )
    );
}
