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
        },
    );
    out.module
        .unwrap_or_else(|| panic!("{call}: {:?}", out.diagnostics))
}

/// (golden file, example, builder call).
const GOLDEN: &[(&str, &str, &str)] = &[
    ("gemm.ascendc.cpp", "gemm.py", "matmul(M=256, N=256, K=256)"),
    (
        "flash_attention.refusal.txt",
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=64, dim=64, block_M=64, block_N=64)",
    ),
];

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
