//! Tests of the rocm backend's translation to AMDGPU LLVM IR.
//!
//! 1. Every example kernel (`examples/*.py`, with its builder's defaults,
//!    plus a few larger calls) is parsed, lowered and translated for
//!    gfx90a and gfx942. When LLVM 19 is installed (`opt`, `llc`,
//!    `ld.lld`; see `toolchain.rs`) the IR is built into a code object and
//!    read back: every kernel is present, its LDS is within 64 KiB, its
//!    wavefront size is 64, and it uses no scratch. Without LLVM the IR
//!    is still emitted and the build is skipped with a message, unless
//!    `TILEC_REQUIRE_LLVM=1`, which makes a missing LLVM a failure.
//! 2. File tests: each `tests/emit/*.thr` (and a few of the core's
//!    `core/tests/thread/*.thr`) is translated for the targets its
//!    `# TARGETS:` line names; the output must equal `NAME.TARGET.ll`
//!    beside it (`TILEC_BLESS=1` rewrites it) and contain, in order, the
//!    lines of its `# CHECK:` comments. With LLVM each also builds. An
//!    `# FP-CONTRACT:` line turns multiply-add contraction on.
//! 3. The description's MFMA fragments are the hardware's, and a wrong
//!    one is refused.
//! 4. Refusals: LDS beyond 64 KiB, an unknown `emit`, an unknown target.

#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tilec_backend_rocm::emit::{self, EmitOptions};
use tilec_backend_rocm::{compile_module, targets, toolchain};
use tilec_core::front::py;
use tilec_core::target::TargetDescription;
use tilec_core::thread;
use tilec_plugin_api::ErrorCode;

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target(arch: &str) -> TargetDescription {
    targets::describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message))
}

fn require_llvm() -> bool {
    std::env::var("TILEC_REQUIRE_LLVM").is_ok_and(|v| v == "1")
}

/// The toolchain, or `None` (after saying so) when it is missing and not
/// required.
fn tools() -> Option<toolchain::Toolchain> {
    match toolchain::find() {
        Ok(t) => Some(t),
        Err(e) => {
            assert!(!require_llvm(), "TILEC_REQUIRE_LLVM=1 but {e}");
            eprintln!("LLVM 19 not found: IR is emitted but not built ({e})");
            None
        }
    }
}

/// Builds `ir` and checks the code object's kernels.
fn build_and_check(
    tools: &toolchain::Toolchain,
    ir: &str,
    arch: &str,
    kernels: &[&str],
    what: &str,
) {
    let bytes = toolchain::build_code_object(tools, ir, arch)
        .unwrap_or_else(|e| panic!("{what}: {e}\n{}", numbered(ir)));
    let object = match tilec_inspect::inspect(&bytes, None) {
        Ok(tilec_inspect::CodeObject::Amdgpu(object)) => object,
        other => panic!("{what}: not an AMDGPU code object: {other:?}"),
    };
    for name in kernels {
        let info = object
            .kernels
            .iter()
            .find(|k| k.name == *name && k.metadata.is_some())
            .unwrap_or_else(|| panic!("{what}: kernel `{name}` missing from the code object"));
        assert_eq!(
            info.wavefront_size(),
            Some(64),
            "{what}: `{name}` wavefront"
        );
        let lds = info.lds_bytes().unwrap_or(u64::MAX);
        assert!(lds <= 65536, "{what}: `{name}` uses {lds} bytes of LDS");
        assert_eq!(
            info.scratch_bytes(),
            Some(0),
            "{what}: `{name}` uses scratch"
        );
    }
}

fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}

fn compile_example(file: &Path, call: Option<&str>) -> tilec_core::ir::Module {
    let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let out = py::compile(
        &source,
        &py::Options {
            kernel: call.map(str::to_string),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    out.module
        .unwrap_or_else(|| panic!("{file:?} {call:?}: {:?}", out.diagnostics))
}

/// Builder calls: the core lowering tests' sizes, then several atoms along
/// K, bf16 and a causal mask. Every example file must appear.
const CALLS: &[(&str, &str)] = &[
    ("elementwise_add.py", "elementwise_add(M=40, N=200)"),
    (
        "guarded_copy.py",
        "guarded_copy(M=40, N=72, block_M=16, block_N=32, threads=128, loaders=64)",
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16, trans_A=True, trans_B=True)",
    ),
    (
        "gemm_bias_relu.py",
        "matmul_bias_relu(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
    ),
    (
        "gemm_splitk.py",
        "matmul_splitk(M=40, N=36, K=64, block_M=32, block_N=32, block_K=16, split_k=2)",
    ),
    ("gemv.py", "gemv(N=100, K=200, block_N=32, block_K=64)"),
    ("layernorm.py", "layernorm(M=20, N=64, block_M=8)"),
    ("rmsnorm.py", "rmsnorm(M=20, N=64, block_M=8)"),
    ("softmax.py", "softmax(M=20, N=64, block_M=8)"),
    ("row_reduce.py", "row_reduce(M=40, N=48, block_M=16)"),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=40, dim=16, block_M=16, block_N=16)",
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=32, dim=32, block_M=32, block_N=32)",
    ),
    (
        "flash_attention_gqa.py",
        "flash_attention_gqa(batch=1, heads=2, kv_heads=1, seq_len=32, dim=16, block_M=16, block_N=16)",
    ),
    (
        "gemm.py",
        "matmul(M=64, N=72, K=80, block_M=64, block_N=64, block_K=32, trans_B=True)",
    ),
    (
        "gemm.py",
        "matmul(M=128, N=128, K=64, block_M=64, block_N=64, block_K=32, dtype=\"bfloat16\")",
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=32, dim=16, block_M=16, block_N=16, is_causal=True)",
    ),
];

/// Examples that need NVIDIA's phased barriers (`T.alloc_barrier`).
const NVIDIA_ONLY: &[&str] = &["gemm_ws.py"];

#[test]
fn every_example_translates_and_builds() {
    let tools = tools();
    let mut files: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .unwrap_or_else(|e| panic!("examples: {e}"))
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|f| f.ends_with(".py"))
        .collect();
    files.sort();
    for f in &files {
        assert!(
            CALLS.iter().any(|(file, _)| file == f) || NVIDIA_ONLY.contains(&f.as_str()),
            "examples/{f} has no builder call in CALLS"
        );
    }
    // Roles over phased barriers: AMD targets have no phased barriers, so
    // the plugin refuses them with a structured error.
    for f in NVIDIA_ONLY {
        let module = compile_example(&repo().join("examples").join(f), None);
        for arch in TARGETS {
            match compile_module(&module, &target(arch), &EmitOptions::default()) {
                Err(e) => assert_eq!(
                    e.code,
                    ErrorCode::UnsupportedFeature,
                    "{f} on {arch}: {e:?}"
                ),
                Ok(_) => panic!("{f} on {arch}: expected a refusal"),
            }
        }
    }
    let cases: Vec<(PathBuf, Option<String>)> = CALLS
        .iter()
        .map(|(file, call)| (repo().join("examples").join(file), Some(call.to_string())))
        .collect();
    let mut failures = Vec::new();
    for (file, call) in &cases {
        let module = compile_example(file, call.as_deref());
        for arch in TARGETS {
            let what = format!(
                "{} {} on {arch}",
                file.file_name()
                    .map(|f| f.to_string_lossy())
                    .unwrap_or_default(),
                call.as_deref().unwrap_or("(defaults)")
            );
            let t = target(arch);
            let compiled = match compile_module(&module, &t, &EmitOptions::default()) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{what}: {:?}: {}", e.code, e.message));
                    continue;
                }
            };
            assert!(
                compiled
                    .llvm_ir
                    .contains("target triple = \"amdgcn-amd-amdhsa\"")
            );
            if let Some(tools) = &tools {
                let names: Vec<&str> = compiled.kernels.iter().map(|k| k.entry.as_str()).collect();
                build_and_check(tools, &compiled.llvm_ir, arch, &names, &what);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The value of a `# KEY: value` header line.
fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .find_map(|l| {
            l.strip_prefix(&format!("# {key}:"))
                .map(|v| v.trim().to_string())
        })
}

fn checks(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# CHECK:").map(|v| v.trim().to_string()))
        .collect()
}

/// The file cases: our own inputs, and core thread-IR files with the
/// targets to translate them for.
fn file_cases() -> Vec<(PathBuf, PathBuf)> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/emit");
    let mut out: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(&here)
        .unwrap_or_else(|e| panic!("{here:?}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "thr"))
        .map(|p| (p.clone(), p))
        .collect();
    for name in [
        "vec_copy",
        "transpose",
        "block_sum",
        "shuffle",
        "mfma_gfx942",
    ] {
        let input = repo().join("core/tests/thread").join(format!("{name}.thr"));
        out.push((input, here.join(format!("core_{name}.thr"))));
    }
    out.sort();
    out
}

#[test]
fn file_tests_match_their_expected_ir() {
    let bless = std::env::var("TILEC_BLESS").is_ok_and(|v| v == "1");
    let tools = tools();
    let mut checked = 0;
    for (input, golden_base) in file_cases() {
        let text = std::fs::read_to_string(&input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        let module = thread::parse_module(&text).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        let targets: Vec<String> = header(&text, "TARGETS")
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_else(|| TARGETS.iter().map(|t| t.to_string()).collect());
        for arch in targets {
            let t = target(&arch);
            let what = format!("{} for {arch}", input.display());
            let options = EmitOptions {
                contract: header(&text, "FP-CONTRACT").is_some(),
                ..EmitOptions::default()
            };
            let emitted =
                emit::emit_module(&module, &t, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
            let golden = golden_base.with_extension(format!("{arch}.ll"));
            if bless {
                std::fs::write(&golden, &emitted.text)
                    .unwrap_or_else(|e| panic!("{golden:?}: {e}"));
            } else {
                let expected = std::fs::read_to_string(&golden)
                    .unwrap_or_else(|e| panic!("{golden:?}: {e} (TILEC_BLESS=1 writes it)"));
                if expected != emitted.text {
                    let line = expected
                        .lines()
                        .zip(emitted.text.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(expected.lines().count().min(emitted.text.lines().count()));
                    panic!(
                        "{what}: IR differs from {} at line {} (TILEC_BLESS=1 rewrites it)\n  expected: {}\n  emitted:  {}",
                        golden.display(),
                        line + 1,
                        expected.lines().nth(line).unwrap_or("<end>"),
                        emitted.text.lines().nth(line).unwrap_or("<end>")
                    );
                }
            }
            // CHECK lines appear in order.
            let mut rest = emitted.text.as_str();
            for check in checks(&text) {
                match rest.find(&check) {
                    Some(at) => rest = &rest[at + check.len()..],
                    None => panic!(
                        "{what}: `{check}` not found (in order) in\n{}",
                        emitted.text
                    ),
                }
            }
            if let Some(tools) = &tools {
                let names: Vec<&str> = module.kernels.iter().map(|k| k.name.as_str()).collect();
                build_and_check(tools, &emitted.text, &arch, &names, &what);
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} file cases");
}

#[test]
fn described_fragments_are_the_hardware_layouts() {
    for arch in TARGETS {
        let t = target(arch);
        assert_eq!(t.matrix_atoms.len(), 2, "{arch}");
        for atom in &t.matrix_atoms {
            emit::mfma::check_fragments(atom).unwrap_or_else(|e| panic!("{arch}: {e}"));
        }
    }
    // The transposed accumulator (TileLang's C fragment) is refused.
    let text = target("gfx942").to_json().unwrap_or_default();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if let Some(atoms) = value["matrix_atoms"].as_array_mut() {
        for atom in atoms.iter_mut().filter(|a| a["name"] == "mfma.16x16x16") {
            atom["accumulator"]["fragment"] = serde_json::json!("((16,4),4):((1,64),16)");
        }
    }
    let t = TargetDescription::from_json(&value.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let atom = t
        .matrix_atoms
        .iter()
        .find(|a| a.name == "mfma.16x16x16")
        .unwrap_or_else(|| panic!("no 16x16x16 atom"));
    let err = emit::mfma::check_fragments(atom).err().unwrap_or_default();
    assert!(err.contains("accumulator"), "{err}");
}

#[test]
fn too_much_lds_is_refused() {
    let src = "thread_ir 0.1\n\nkernel @big(%out: global f32[1]) grid(1, 1, 1) threads(64) {\n  shared %a: f32[16384] align(16)\n  shared %b: f32[4] align(16)\n  var %x: f32\n  load shared x1 %x <- %b[0]\n  store global x1 %out[0] <- %x\n}\n";
    let module = thread::parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    let err = emit::emit_module(&module, &target("gfx942"), &EmitOptions::default()).err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("65552 bytes of shared buffers exceed the 65536 bytes"),
        "{text}"
    );
}

/// LLVM's `atomicrmw fmax` follows `maxnum` (a NaN operand loses), not
/// the compare-and-swap meaning of `T.atomic_max` on floats: refused.
#[test]
fn float_atomic_max_is_refused() {
    let src = "thread_ir 0.1\n\nkernel @fmax(%out: global f32[1]) grid(1, 1, 1) threads(64) {\n  atomic_max %out[0], f32(1.5)\n}\n";
    let module = thread::parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    let err = emit::emit_module(&module, &target("gfx942"), &EmitOptions::default()).err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("atomic_max of f32 (the AMDGPU backend combines integers only"),
        "{text}"
    );
}

#[test]
fn requests_name_what_is_wrong() {
    use tilec_plugin_api::{BackendPlugin, CompileOptions, CompileRequest, IrDocument};
    let module = compile_example(&repo().join("examples/elementwise_add.py"), None);
    let request = |target: &str, emit: &str| CompileRequest {
        ir: IrDocument {
            format: tilec_plugin_api::TILE_IR_FORMAT,
            module: module.clone(),
        },
        target: target.to_string(),
        options: CompileOptions {
            emit: emit.to_string(),
            ..CompileOptions::default()
        },
    };
    let code = |r| tilec_backend_rocm::Rocm::compile(r).err().map(|e| e.code);
    assert_eq!(code(request("gfx942", "ptx")), Some(ErrorCode::BadRequest));
    assert_eq!(code(request("sm_80", "")), Some(ErrorCode::UnknownTarget));
    let ok = tilec_backend_rocm::Rocm::compile(request("gfx90a", ""))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(ok.artifacts[0].name, "module.ll");
    assert_eq!(ok.kernels.len(), 1);
    assert!(!ok.kernels[0].grid.is_empty());
    let thr = tilec_backend_rocm::Rocm::compile(request("gfx942", "thread-ir"))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert!(String::from_utf8_lossy(&thr.artifacts[0].bytes).starts_with("thread_ir 0.1"));
    match toolchain::find() {
        Ok(_) => {
            let co = tilec_backend_rocm::Rocm::compile(request("gfx942", "hsaco"))
                .unwrap_or_else(|e| panic!("{}", e.message));
            assert!(co.artifacts[0].bytes.starts_with(b"\x7fELF"));
            assert!(co.kernels[0].registers.is_some());
        }
        Err(_) => {
            assert!(!require_llvm());
            let e = tilec_backend_rocm::Rocm::compile(request("gfx942", "hsaco")).err();
            let message = e.map(|e| e.message).unwrap_or_default();
            assert!(message.contains("was not found"), "{message}");
        }
    }
}
