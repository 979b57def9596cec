//! Tests of the Ascend backend end to end.
//!
//! 1. **File tests** pin the structure of the emitted AscendC: each case
//!    of [`GOLDEN`] compiles an example and must equal
//!    `tests/golden/<name>` (the source, or the refusal's code, message and
//!    line for a kernel the backend refuses). `TILEC_BLESS=1` rewrites the
//!    expectations.
//! 2. **Differential runs**: examples compiled, built against the CPU
//!    execution model and run through the plugin's runtime on seeded
//!    inputs, compared with the reference interpreter.
//! 3. **Mutations** of emitted flash attention: without any one kind of
//!    its cross-core flags, the CPU model must fail the launch.
//!
//! `TILEC_ASCEND_DUMP=dir` writes every source the runs compile there.
//!
//! The runs need a C++ compiler; without one they are skipped unless
//! `TILEC_REQUIRE_CXX=1`, which makes a missing compiler a failure.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tilec_backend_ascend::{compile_module, runtime, targets};
use tilec_core::front::{line_col, py};
use tilec_core::interp::{self, Tensor};
use tilec_core::ir::{DType, Function, Module};
use tilec_plugin_api::{Artifact, ArtifactKind, RuntimeRequest, RuntimeResponse};

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn source(file: &str) -> String {
    std::fs::read_to_string(examples_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn module(file: &str, call: &str) -> Module {
    let out = py::compile(
        &source(file),
        &py::Options {
            kernel: Some(call.to_string()),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    out.module
        .unwrap_or_else(|| panic!("{call}: {:?}", out.diagnostics))
}

/// (golden file, example, builder call).
const GOLDEN: &[(&str, &str, &str)] = &[
    ("gemm.ascendc.cpp", "gemm.py", "matmul(M=256, N=256, K=256)"),
    (
        "flash_attention.ascendc.cpp",
        "flash_attention.py",
        FLASH_ATTENTION,
    ),
];

/// The flash-attention kernel the golden file and the mutation test pin:
/// causal, two key blocks per query block at most.
const FLASH_ATTENTION: &str = "flash_attention(batch=1, heads=1, seq_len=128, dim=64, is_causal=True, block_M=64, block_N=64)";

fn emitted_or_refusal(file: &str, call: &str) -> String {
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    match compile_module(&module(file, call), &target) {
        Ok(c) => c.source,
        Err(e) => {
            let src = source(file);
            let line = e
                .diagnostics
                .first()
                .and_then(|d| d.location.as_ref())
                .map(|l| line_col(&src, l.span.start).0)
                .unwrap_or(0);
            format!("{:?} at line {line}: {}\n", e.code, e.message)
        }
    }
}

#[test]
fn emitted_ascendc_matches_the_golden_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("TILEC_BLESS").is_some_and(|v| v != "0");
    let mut failures = Vec::new();
    for (name, file, call) in GOLDEN {
        let got = emitted_or_refusal(file, call);
        // Deterministic: a second compile gives the same text.
        assert_eq!(
            got,
            emitted_or_refusal(file, call),
            "{name}: not deterministic"
        );
        let path = dir.join(name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("{e}"));
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            failures.push(format!(
                "{name}: differs from the golden file (TILEC_BLESS=1 rewrites it)\n--- got ---\n{got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_gemm_kernel_has_the_ascendc_structure() {
    let text = emitted_or_refusal("gemm.py", "matmul(M=256, N=256, K=256)");
    for needle in [
        "extern \"C\" __global__ __aicore__ void main_k0(GM_ADDR A, GM_ADDR B, GM_ADDR C, GM_ADDR tiling)",
        "TBuf<TPosition::A1>",
        "TBuf<TPosition::B1>",
        "TBuf<TPosition::CO1>",
        "TBuf<TPosition::A2>",
        "TBuf<TPosition::B2>",
        "Nd2NzParams",
        "LoadData(",
        "Mmad(",
        "Fixpipe(",
        "SetFlag<HardEvent::MTE2_MTE1>",
        "SetFlag<HardEvent::MTE1_M>",
        "PipeBarrier<PIPE_ALL>",
        "GetBlockIdx()",
        // T.Pipelined: operands double-buffered, iterations ordered by flags.
        "LocalTensor<half> A_shared = tl_slot == 0 ? A_shared_ping : A_shared_pong;",
        "WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID4 + tl_slot);",
        "WaitFlag<HardEvent::M_MTE1>(EVENT_ID6);",
        "<<<block_dim, nullptr, stream>>>",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
}

/// Seeded inputs: small values exactly representable in every float type.
fn inputs(func: &Function, sizes: &[(&str, usize)], seed: u64) -> Vec<Tensor> {
    let shapes = interp::param_shapes(
        func,
        &sizes
            .iter()
            .map(|(n, v)| (n.to_string(), *v as i64))
            .collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    shapes
        .into_iter()
        .zip(&func.params)
        .map(|(shape, p)| {
            let dtype = func.buffers[p.buffer].dtype;
            let n: usize = shape.iter().product();
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let v = ((state >> 33) % 17) as f64 - 8.0;
                    if dtype.is_int() { v } else { v / 8.0 }
                })
                .collect();
            Tensor::from_f64(dtype, shape, values).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

fn rt(request: RuntimeRequest) -> RuntimeResponse {
    runtime::call(request).unwrap_or_else(|e| panic!("{:?}: {}", e.code, e.message))
}

/// Runs `func` (compiled to `source`) on the CPU model.
fn run_model(
    func: &Function,
    source: &str,
    kernels: &[tilec_plugin_api::KernelMetadata],
    args: &mut [Tensor],
) {
    let module = match rt(RuntimeRequest::Load {
        device: 0,
        artifact: Artifact {
            name: "k.ascendc.cpp".into(),
            kind: ArtifactKind::Text,
            bytes: source.as_bytes().to_vec(),
        },
    }) {
        RuntimeResponse::Module(m) => m,
        other => panic!("{other:?}"),
    };
    let shapes: Vec<Vec<usize>> = args.iter().map(|t| t.shape.clone()).collect();
    let symbols = interp::bind_symbols(func, &shapes).unwrap_or_else(|e| panic!("{e}"));
    let mut handles = BTreeMap::new();
    for (p, t) in func.params.iter().zip(args.iter()) {
        let bytes = t.to_le_bytes();
        let h = match rt(RuntimeRequest::Alloc {
            device: 0,
            bytes: bytes.len() as u64,
        }) {
            RuntimeResponse::Buffer(h) => h,
            other => panic!("{other:?}"),
        };
        rt(RuntimeRequest::CopyToDevice {
            buffer: h,
            offset: 0,
            data: bytes,
        });
        handles.insert(func.buffers[p.buffer].name.clone(), h);
    }
    for k in kernels {
        let mut grid = [1u32; 3];
        for (g, text) in grid.iter_mut().zip(&k.grid) {
            *g = tilec_plugin_api::extent::evaluate(text, &symbols)
                .unwrap_or_else(|e| panic!("{e}")) as u32;
        }
        let launch_args = k
            .params
            .iter()
            .map(|p| {
                handles
                    .get(&p.name)
                    .copied()
                    .unwrap_or_else(|| symbols[&p.name] as u64)
            })
            .collect();
        rt(RuntimeRequest::Launch {
            module,
            entry: k.entry.clone(),
            grid,
            threads: k.threads,
            shared_bytes: 0,
            args: launch_args,
        });
    }
    for (p, t) in func.params.iter().zip(args.iter_mut()) {
        let h = handles[&func.buffers[p.buffer].name];
        let len = t.len() as u64 * t.dtype.bytes();
        if let RuntimeResponse::Data(d) = rt(RuntimeRequest::CopyToHost {
            buffer: h,
            offset: 0,
            len,
        }) {
            *t = Tensor::from_le_bytes(t.dtype, t.shape.clone(), &d)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        rt(RuntimeRequest::Free { buffer: h });
    }
}

fn have_cxx() -> bool {
    if runtime::find_cxx().is_some() {
        return true;
    }
    assert!(
        std::env::var_os("TILEC_REQUIRE_CXX").is_none(),
        "TILEC_REQUIRE_CXX is set but no C++ compiler was found"
    );
    false
}

/// (example, builder call, relative tolerance); no symbolic sizes.
const RUNS: &[(&str, &str, f64)] = &[
    // Flash attention: the scores, probabilities and output accumulator
    // go between the cube and the vector core through the GM workspace.
    // Ragged sequences (80 = 2.5 blocks) and both masks.
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=2, seq_len=80, dim=32, is_causal=True, block_M=32, block_N=32)",
        1e-2,
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=2, heads=1, seq_len=80, dim=32, is_causal=False, block_M=32, block_N=32)",
        1e-2,
    ),
    (
        "flash_attention_gqa.py",
        "flash_attention_gqa(batch=1, heads=4, kv_heads=2, seq_len=64, dim=32, is_causal=True, block_M=32, block_N=32)",
        1e-2,
    ),
    (
        "gemm.py",
        "matmul(M=80, N=72, K=40, block_M=32, block_N=32, block_K=16)",
        1e-3,
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16, trans_A=True, trans_B=True)",
        1e-3,
    ),
    ("elementwise_add.py", "elementwise_add(M=40, N=200)", 1e-3),
    ("softmax.py", "softmax(M=20, N=64, block_M=8)", 2e-3),
    ("rmsnorm.py", "rmsnorm(M=20, N=64, block_M=8)", 2e-3),
    ("layernorm.py", "layernorm(M=20, N=64, block_M=8)", 2e-3),
    ("row_reduce.py", "row_reduce(M=40, N=48, block_M=16)", 2e-3),
];

#[test]
fn examples_on_the_cpu_model_match_the_interpreter() {
    if !have_cxx() {
        return;
    }
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    let mut failures = Vec::new();
    for (file, call, tol) in RUNS {
        let m = module(file, call);
        let compiled = match compile_module(&m, &target) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{call}: refused: {}", e.message));
                continue;
            }
        };
        if let Some(dir) = std::env::var_os("TILEC_ASCEND_DUMP") {
            let name: String = call
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let _ = std::fs::write(
                PathBuf::from(dir).join(format!("{name}.cpp")),
                &compiled.source,
            );
        }
        let func = &m.functions[0];
        let given = inputs(func, &[], 11);
        let mut want = given.clone();
        interp::run(func, &mut want).unwrap_or_else(|e| panic!("{call}: {e}"));
        let mut got = given.clone();
        run_model(func, &compiled.source, &compiled.kernels, &mut got);
        for (w, g) in want.iter().zip(&got) {
            let (wv, gv) = (w.to_f64_vec(), g.to_f64_vec());
            let scale = wv.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            let bad = wv
                .iter()
                .zip(&gv)
                .position(|(a, b)| !((a - b).abs() <= tol * scale || (a.is_nan() && b.is_nan())));
            if let Some(i) = bad {
                failures.push(format!("{call}: element {i}: want {} got {}", wv[i], gv[i]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flash_attention_is_a_mixed_kernel_with_a_workspace_round_trip() {
    let text = emitted_or_refusal("flash_attention.py", FLASH_ATTENTION);
    for needle in [
        "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);",
        "GM_ADDR Output, GM_ADDR workspace, GM_ADDR tiling)",
        "// tilec-entry main_k0 b b b b ws=",
        // S = Q K^T: a fresh product in L0C, out through the fixpipe.
        "Mmad(acc_s_l0c, tl_l0a, tl_l0b, tl_mp);",
        "Fixpipe(acc_s_ws, acc_s_l0c, tl_fp);",
        "TILEC_AIC CrossCoreSetFlag<2, PIPE_FIX>(0);",
        "TILEC_AIV_ALL CrossCoreWaitFlag(0);",
        // ... into UB and added to the mask the vector core wrote.
        "DataCopy(tl_gemm_in_float32, acc_s_ws, 4096);",
        "Add(acc_s, acc_s, tl_gemm_in_float32, 4096);",
        // P: UB -> GM -> L1 as NZ fractals for the second gemm.
        "DataCopy(acc_s_cast_ws, acc_s_cast, 4096);",
        "TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE3>(4);",
        "TILEC_AIC CrossCoreWaitFlag(4);",
        "DataCopy(acc_s_cast_l1, acc_s_cast_ws, Nd2NzParams{",
        "Mmad(acc_o_l0c, tl_l0a, tl_l0b, tl_mp);",
        // The next iteration may overwrite the workspace only after the
        // other core has read it.
        "TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE2>(5);",
        "TILEC_AIC CrossCoreSetFlag<2, PIPE_MTE2>(1);",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
    // The vector core never touches the cube's buffers.
    assert!(!text.contains("acc_s_l0c.GetValue"), "{text}");
}

/// Runs flash attention from `source` on the CPU model; the model's
/// message if the launch fails.
fn run_flash_attention(source: &str) -> Result<(), String> {
    let m = module("flash_attention.py", FLASH_ATTENTION);
    let func = &m.functions[0];
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    let kernels = compile_module(&m, &target)
        .unwrap_or_else(|e| panic!("{}", e.message))
        .kernels;
    let module = match runtime::call(RuntimeRequest::Load {
        device: 0,
        artifact: Artifact {
            name: "fa.ascendc.cpp".into(),
            kind: ArtifactKind::Text,
            bytes: source.as_bytes().to_vec(),
        },
    }) {
        Ok(RuntimeResponse::Module(m)) => m,
        other => panic!("{other:?}"),
    };
    let mut args = Vec::new();
    for t in inputs(func, &[], 5) {
        let bytes = t.to_le_bytes();
        let h = match rt(RuntimeRequest::Alloc {
            device: 0,
            bytes: bytes.len() as u64,
        }) {
            RuntimeResponse::Buffer(h) => h,
            other => panic!("{other:?}"),
        };
        rt(RuntimeRequest::CopyToDevice {
            buffer: h,
            offset: 0,
            data: bytes,
        });
        args.push(h);
    }
    let result = runtime::call(RuntimeRequest::Launch {
        module,
        entry: kernels[0].entry.clone(),
        grid: [2, 1, 1],
        threads: kernels[0].threads,
        shared_bytes: 0,
        args: args.clone(),
    });
    for h in args {
        rt(RuntimeRequest::Free { buffer: h });
    }
    result.map(|_| ()).map_err(|e| e.message)
}

#[test]
fn the_cpu_model_fails_flash_attention_without_its_cross_core_flags() {
    if !have_cxx() {
        return;
    }
    let text = emitted_or_refusal("flash_attention.py", FLASH_ATTENTION);
    run_flash_attention(&text).unwrap_or_else(|e| panic!("the emitted kernel fails: {e}"));
    // Each kind of cross-core pair (direction and source pipe): the
    // scores to the vector core (FIX), the probabilities to the cube
    // (MTE3), and the hand-backs at the end of an iteration (MTE2).
    let pairs: Vec<(&str, &str)> = vec![
        (
            "TILEC_AIC CrossCoreSetFlag<2, PIPE_FIX>(0);",
            "TILEC_AIV_ALL CrossCoreWaitFlag(0);",
        ),
        (
            "TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE3>(4);",
            "TILEC_AIC CrossCoreWaitFlag(4);",
        ),
        (
            "TILEC_AIC CrossCoreSetFlag<2, PIPE_MTE2>(1);",
            "TILEC_AIV_ALL CrossCoreWaitFlag(1);",
        ),
        (
            "TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE2>(5);",
            "TILEC_AIC CrossCoreWaitFlag(5);",
        ),
    ];
    for (set, wait) in pairs {
        assert!(text.contains(set) && text.contains(wait), "missing {set}");
        let mutated: String = text
            .lines()
            .filter(|l| l.trim() != set && l.trim() != wait)
            .map(|l| format!("{l}\n"))
            .collect();
        let error = run_flash_attention(&mutated)
            .err()
            .unwrap_or_else(|| panic!("ran clean without `{set}`"));
        assert!(
            error.contains("without a cross-core flag"),
            "without `{set}`: {error}"
        );
    }
}

/// Compiles `src` (a kernel file) with `call` and returns the refusal's
/// message and the source line it points at.
fn refusal_at(src: &str, call: &str) -> (String, String) {
    let out = py::compile(
        src,
        &py::Options {
            kernel: Some(call.to_string()),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    let m = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    let error = compile_module(&m, &target)
        .err()
        .unwrap_or_else(|| panic!("{call}: accepted"));
    assert_eq!(error.code, tilec_plugin_api::ErrorCode::UnsupportedFeature);
    let span = error.diagnostics[0]
        .location
        .as_ref()
        .map(|l| l.span)
        .unwrap_or_default();
    let line = line_col(src, span.start).0;
    let text = src.lines().nth(line.saturating_sub(1)).unwrap_or("");
    (error.message, text.trim().to_string())
}

/// A kernel with cube and vector work; `{extra}` adds statements.
const MIXED: &str = r#"
import tilelang
import tilelang.language as T

@tilelang.jit
def mixed(M=32, N=32, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((M, K), "float16")
            b = T.alloc_shared((N, K), "float16")
            c = T.alloc_fragment((M, N), "float32")
{extra}
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(M, N):
                c[i, j] = c[i, j] * 2
            T.copy(c, C)
    return main
"#;

#[test]
fn what_mixed_kernels_cannot_do_is_refused_at_its_line() {
    let src = MIXED.replace("{extra}", "            n = T.alloc_var(\"int32\")");
    let (message, line) = refusal_at(&src, "mixed()");
    assert!(message.contains("`T.alloc_var`"), "{message}");
    assert!(line.contains("T.alloc_var"), "{line}");
    // The vector core's scalar unit writes A; the cube core then loads it.
    let src = MIXED.replace(
        "{extra}",
        "            for i, k in T.Parallel(M, K):\n                A[i, k] = A[i, k] * 2",
    );
    let (message, line) = refusal_at(&src, "mixed()");
    assert!(
        message.contains("a cross-core flag cannot be set from that pipe"),
        "{message}"
    );
    assert_eq!(line, "T.copy(A, a)");
    // Without the extra statements the kernel compiles.
    let src = MIXED.replace("{extra}", "");
    let out = py::compile(
        &src,
        &py::Options {
            kernel: Some("mixed()".to_string()),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    let m = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    compile_module(&m, &target).unwrap_or_else(|e| panic!("{}", e.message));
}

#[test]
fn a_float32_gemm_that_needs_a_b_transpose_is_refused_at_its_line() {
    let target = targets::describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
    let m = module(
        "gemm.py",
        "matmul(M=64, N=64, K=64, dtype=\"float32\", accum_dtype=\"float32\")",
    );
    let error = compile_module(&m, &target)
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert_eq!(error.code, tilec_plugin_api::ErrorCode::UnsupportedFeature);
    assert!(
        error
            .message
            .contains("LoadData2D does only for 16-bit types"),
        "{}",
        error.message
    );
    let span = error.diagnostics[0]
        .location
        .as_ref()
        .map(|l| l.span)
        .unwrap_or_default();
    let src = source("gemm.py");
    let line = line_col(&src, span.start).0;
    assert!(
        src.lines().nth(line - 1).unwrap_or("").contains("T.gemm"),
        "line {line}"
    );
    let _ = DType::F32;
}

#[test]
fn per_thread_code_is_refused_at_its_line() {
    let src = r#"
import tilelang
import tilelang.language as T

@T.prim_func
def mirror(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((64,), "float32")
        T.copy(A, S)
        tx = T.get_thread_binding()
        B[tx] = S[63 - tx]
"#;
    let (message, line) = refusal_at(src, "mirror");
    assert!(message.contains("thread index `tx`"), "{message}");
    assert!(line.starts_with("B[tx]"), "{line}");
}
