//! Tests of the baseline lowering (`tilec_core::lower`).
//!
//! 1. Every example kernel, on every shipped target: lower, verify, run
//!    through the SIMT interpreter on seeded random inputs and require the
//!    outputs to be bit-identical to the reference interpreter's on the
//!    same inputs. Kernels that hit `LowerError::Unsupported` must be
//!    listed in `KNOWN_GAPS` (and nothing else may be listed).
//! 2. File cases: every `core/tests/lower/*.tir` is lowered for the target
//!    named in its file name (`name.gfx942.tir`; default sm_80) and the
//!    printed thread IR must equal the `.thr` file beside it;
//!    `TILEC_BLESS=1` rewrites the expectation instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tilec_core::front::py;
use tilec_core::interp::{self, Tensor, TensorData};
use tilec_core::ir::{DTypeKind, Function, Module};
use tilec_core::lower::{self, LowerError};
use tilec_core::simt::{self, SimtOptions};
use tilec_core::target;
use tilec_core::thread;

const TARGETS: [&str; 4] = ["sm_80", "sm_90a", "gfx942", "apple"];

/// (example file, builder call with sizes small enough for the SIMT
/// interpreter in a debug build; ragged sizes where the example allows).
const EXAMPLES: &[(&str, &str)] = &[
    ("elementwise_add.py", "elementwise_add(M=40, N=200)"),
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
        "flash_attention(batch=1, heads=1, seq_len=32, dim=16, block_M=16, block_N=16, is_causal=True)",
    ),
    (
        "flash_attention_gqa.py",
        "flash_attention_gqa(batch=1, heads=2, kv_heads=1, seq_len=32, dim=16, block_M=16, block_N=16)",
    ),
];

/// Example builder calls that the baseline lowering reports as
/// `Unsupported` (on every target). Empty: every example lowers.
const KNOWN_GAPS: &[&str] = &[];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn inputs(f: &Function, seed: u64) -> Vec<Tensor> {
    let shapes = interp::param_shapes(f, &BTreeMap::new())
        .unwrap_or_else(|e| panic!("{}: parameter shapes: {e}", f.name));
    let mut rng = SplitMix64(seed);
    f.params
        .iter()
        .zip(shapes)
        .map(|(param, shape)| {
            let dtype = f.buffers[param.buffer].dtype;
            let len: usize = shape.iter().product();
            let data = match dtype.kind() {
                DTypeKind::Float => TensorData::Float(
                    (0..len)
                        .map(|_| {
                            dtype.round_f64(
                                (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0,
                            )
                        })
                        .collect(),
                ),
                DTypeKind::Signed => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 17) as i64 - 8).collect())
                }
                DTypeKind::Unsigned | DTypeKind::Bool => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 2) as i64).collect())
                }
            };
            Tensor { dtype, shape, data }
        })
        .collect()
}

/// The first differing element of two tensors, bit for bit (NaNs equal).
fn first_difference(want: &Tensor, got: &Tensor) -> Option<String> {
    match (&want.data, &got.data) {
        (TensorData::Float(a), TensorData::Float(b)) => a
            .iter()
            .zip(b)
            .position(|(x, y)| x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan()))
            .map(|i| format!("element {i}: want {} got {}", a[i], b[i])),
        (TensorData::Int(a), TensorData::Int(b)) => a
            .iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .map(|i| format!("element {i}: want {} got {}", a[i], b[i])),
        _ => Some("different element classes".to_string()),
    }
}

fn compile(file: &str, call: &str) -> Module {
    let source = std::fs::read_to_string(examples_dir().join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let out = py::compile(
        &source,
        &py::Options {
            kernel: Some(call.to_string()),
            defines: BTreeMap::new(),
        },
    );
    out.module
        .unwrap_or_else(|| panic!("{call}: {:?}", out.diagnostics))
}

/// Lowers, runs under SIMT and compares with the interpreter. `Ok(false)`
/// when the lowering reports `Unsupported`.
fn check_example(module: &Module, call: &str, target_name: &str) -> Result<bool, String> {
    let target = target::builtin(target_name).map_err(|e| e.to_string())?;
    let lowered = match lower::to_thread(module, &target) {
        Ok(m) => m,
        Err(LowerError::Unsupported { .. }) => return Ok(false),
        Err(e) => return Err(format!("{call} on {target_name}: {e}")),
    };
    thread::verify_module(&lowered, &target).map_err(|e| format!("{call}: verify: {e}"))?;
    // The printed text reads back to the same module.
    let text = thread::print_module(&lowered);
    let reparsed = thread::parse_module(&text).map_err(|e| format!("{call}: reparse: {e}"))?;
    if thread::print_module(&reparsed) != text {
        return Err(format!("{call}: the printed thread IR does not round-trip"));
    }
    let func = &module.functions[0];
    if lowered.kernels.len() != 1 {
        return Err(format!("{call}: expected one kernel"));
    }
    let kernel = &lowered.kernels[0];
    let mut want = inputs(func, 7);
    let mut got = want.clone();
    interp::run(func, &mut want).map_err(|e| format!("{call}: interp: {e}"))?;
    let shapes: Vec<Vec<usize>> = got.iter().map(|t| t.shape.clone()).collect();
    let symbols =
        interp::bind_symbols(func, &shapes).map_err(|e| format!("{call}: symbols: {e}"))?;
    simt::run(
        kernel,
        &target,
        &mut got,
        &SimtOptions {
            symbols,
            ..SimtOptions::default()
        },
    )
    .map_err(|e| format!("{call} on {target_name}: simt: {e}"))?;
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        if let Some(d) = first_difference(w, g) {
            return Err(format!(
                "{call} on {target_name}: parameter {i} differs: {d}"
            ));
        }
    }
    Ok(true)
}

#[test]
fn examples_match_the_interpreter_on_every_target() {
    let mut failures = Vec::new();
    let mut gaps = Vec::new();
    for &(file, call) in EXAMPLES {
        let module = compile(file, call);
        let mut unsupported = 0;
        for t in TARGETS {
            match check_example(&module, call, t) {
                Ok(true) => {}
                Ok(false) => unsupported += 1,
                Err(e) => failures.push(e),
            }
        }
        if unsupported > 0 {
            gaps.push(call);
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    assert_eq!(
        gaps, KNOWN_GAPS,
        "the set of unsupported examples changed; update KNOWN_GAPS"
    );
}

#[test]
fn unknown_constructs_are_typed_errors_with_spans() {
    let src = "tile_ir 0.1\n\nfunc @f(%A: global f32[4]) {\n  kernel grid(1) threads(32) block(%bx) thread(%tx) {\n    alloc %s: shared f32[4]\n    parallel (%i < 4) {\n      barrier\n    }\n  }\n}\n";
    let module = tilec_core::text::parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    let target = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    match lower::to_thread(&module, &target) {
        Err(e @ LowerError::Unsupported { .. }) => {
            let span = e.span();
            assert_eq!(&src[span.start as usize..span.end as usize], "barrier");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// `name.TARGET.tir` names its target; plain `name.tir` is for sm_80.
fn target_of(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit_once('.'))
        .map(|(_, t)| t.to_string())
        .filter(|t| target::builtin_names().contains(&t.as_str()))
        .unwrap_or_else(|| "sm_80".to_string())
}

#[test]
fn file_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tir"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let bless = std::env::var_os("TILEC_BLESS").is_some();
    let mut failures = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let module = tilec_core::text::parse_module(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let target = target::builtin(&target_of(&file)).unwrap_or_else(|e| panic!("{e}"));
        let got = match lower::to_thread(&module, &target) {
            Ok(m) => thread::print_module(&m),
            Err(e) => format!("# ERROR: {e}\n"),
        };
        let expected = file.with_extension("thr");
        let want = std::fs::read_to_string(&expected).unwrap_or_default();
        if got != want {
            if bless {
                std::fs::write(&expected, &got)
                    .unwrap_or_else(|e| panic!("{}: {e}", expected.display()));
            } else {
                failures.push(format!("{}:\n{got}", expected.display()));
            }
        }
        // The expectation is lowered code that runs.
        if let Ok(m) = thread::parse_module(&got) {
            thread::verify_module(&m, &target)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "lowered text differs (TILEC_BLESS=1 to re-bless):\n{}",
        failures.join("\n")
    );
}
