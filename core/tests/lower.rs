//! Tests of the lowering to thread-level IR (`tilec_core::lower`).
//!
//! 1. Every example kernel, on every shipped target: lower, verify, run
//!    through the SIMT interpreter on seeded random inputs and compare the
//!    outputs with the reference interpreter's on the same inputs.
//!    Parameters the reference leaves unchanged, and every output of an
//!    example without a `gemm`, must be bit-identical. Outputs of examples
//!    with a `gemm` may differ within an accumulation bound that grows with
//!    the reduction length (matrix atoms round once per atom, the
//!    reference once per `gemm`): the bound of the conformance suite's
//!    `Accumulation` class, restated here. Kernels that hit
//!    `LowerError::Unsupported` must be listed in `KNOWN_GAPS` (and
//!    nothing else may be listed). On targets with usable atoms the gemm
//!    examples must actually issue atoms.
//! 2. Negative checks: lowering through a deliberately wrong fragment map
//!    (then running the true one) must fail the comparison.
//! 3. File cases: every `core/tests/lower/*.tir` is lowered for the target
//!    named in its file name (`name.gfx942.tir`; default sm_80) and the
//!    printed thread IR must equal the `.thr` file beside it;
//!    `TILEC_BLESS=1` rewrites the expectation instead. Each case with
//!    constant shapes also runs under the SIMT interpreter against the
//!    reference, bit for bit unless `FILE_CLASSES` lists it with a
//!    reduction length.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tilec_core::front::py;
use tilec_core::interp::{self, Tensor, TensorData};
use tilec_core::ir::{DType, DTypeKind, Function, Module};
use tilec_core::lower::{self, LowerError};
use tilec_core::simt::{self, SimtOptions, Stats};
use tilec_core::target::{self, OperandRole, TargetDescription};
use tilec_core::thread;

const TARGETS: [&str; 4] = ["sm_80", "sm_90a", "gfx942", "apple"];

/// How the outputs of a kernel are compared with the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    /// Bit for bit.
    Exact,
    /// Within the accumulation bound of a reduction of `len` terms in an
    /// f32 accumulator (see [`accumulation_bound`]).
    Accumulation { len: u64 },
}

/// (example file, builder call with sizes small enough for the SIMT
/// interpreter in a debug build, ragged sizes where the example allows;
/// how its outputs compare).
const EXAMPLES: &[(&str, &str, Class)] = &[
    (
        "elementwise_add.py",
        "elementwise_add(M=40, N=200)",
        Class::Exact,
    ),
    // Half the block loads the tile (`if tx < loaders:`).
    (
        "guarded_copy.py",
        "guarded_copy(M=40, N=72, block_M=16, block_N=32, threads=128, loaders=64)",
        Class::Exact,
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
        Class::Accumulation { len: 24 },
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16, trans_A=True, trans_B=True)",
        Class::Accumulation { len: 24 },
    ),
    // Several atoms per gemm call along K (32 = 2 × k), a 64×64 tile.
    (
        "gemm.py",
        "matmul(M=64, N=72, K=80, block_M=64, block_N=64, block_K=32, trans_B=True)",
        Class::Accumulation { len: 80 },
    ),
    (
        "gemm_bias_relu.py",
        "matmul_bias_relu(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
        Class::Accumulation { len: 24 },
    ),
    (
        "gemm_splitk.py",
        "matmul_splitk(M=40, N=36, K=64, block_M=32, block_N=32, block_K=16, split_k=2)",
        Class::Accumulation { len: 64 },
    ),
    (
        "gemv.py",
        "gemv(N=100, K=200, block_N=32, block_K=64)",
        Class::Exact,
    ),
    (
        "layernorm.py",
        "layernorm(M=20, N=64, block_M=8)",
        Class::Exact,
    ),
    ("rmsnorm.py", "rmsnorm(M=20, N=64, block_M=8)", Class::Exact),
    ("softmax.py", "softmax(M=20, N=64, block_M=8)", Class::Exact),
    (
        "row_reduce.py",
        "row_reduce(M=40, N=48, block_M=16)",
        Class::Exact,
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=40, dim=16, block_M=16, block_N=16)",
        Class::Accumulation { len: 40 },
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=32, dim=16, block_M=16, block_N=16, is_causal=True)",
        Class::Accumulation { len: 32 },
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=32, dim=32, block_M=32, block_N=32)",
        Class::Accumulation { len: 32 },
    ),
    (
        "flash_attention_gqa.py",
        "flash_attention_gqa(batch=1, heads=2, kv_heads=1, seq_len=32, dim=16, block_M=16, block_N=16)",
        Class::Accumulation { len: 32 },
    ),
];

/// Example builder calls that the lowering reports as `Unsupported` (on
/// every target). Empty: every example lowers.
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

/// Seeded inputs of `f`, its symbolic sizes bound to `sizes`.
fn inputs_sized(
    f: &Function,
    seed: u64,
    sizes: &interp::SymbolValues,
) -> Result<Vec<Tensor>, String> {
    let shapes =
        interp::param_shapes(f, sizes).map_err(|e| format!("{}: parameter shapes: {e}", f.name))?;
    let mut rng = SplitMix64(seed);
    Ok(f.params
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
        .collect())
}

/// The same tensors with every float replaced by its absolute value.
fn absolute(tensors: &[Tensor]) -> Vec<Tensor> {
    tensors
        .iter()
        .map(|t| {
            let data = match &t.data {
                TensorData::Float(v) => TensorData::Float(v.iter().map(|x| x.abs()).collect()),
                TensorData::Int(v) => TensorData::Int(v.clone()),
            };
            Tensor {
                dtype: t.dtype,
                shape: t.shape.clone(),
                data,
            }
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

/// The smallest positive (subnormal) value of a float type.
fn smallest_subnormal(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2f64.powi(-24),
        DType::BF16 => 2f64.powi(-133),
        DType::F32 => 2f64.powi(-149),
        DType::F8E4M3 => 2f64.powi(-9),
        DType::F8E5M2 => 2f64.powi(-16),
        _ => 0.0,
    }
}

/// The conformance suite's accumulation bound for one element:
/// `γ·magnitude + 2·u_out·|expected| + subnormal`, with `γ = (1 +
/// 2·u_acc)^len − 1` (a recursive sum of `len` terms, the unit roundoff
/// doubled), `magnitude = Σ|terms|` and `u_out` the output's unit
/// roundoff (both sides round once into the output type).
fn accumulation_bound(expected: f64, magnitude: f64, len: u64, out: DType) -> f64 {
    let u_acc = DType::F32.unit_roundoff().unwrap_or(0.0);
    let gamma = ((len as f64) * (2.0 * u_acc).ln_1p()).exp_m1();
    let u_out = out.unit_roundoff().unwrap_or(0.0);
    gamma * magnitude.abs() + 2.0 * u_out * expected.abs() + smallest_subnormal(out)
}

/// The first element of `got` outside the accumulation bound around
/// `want`; `magnitude` is the reference run on absolute inputs (`Σ|terms|`
/// for sums and dot products; `|want| + 1` is the least magnitude used).
fn first_outside_bound(
    want: &Tensor,
    got: &Tensor,
    magnitude: &Tensor,
    len: u64,
) -> Option<String> {
    let (TensorData::Float(w), TensorData::Float(g)) = (&want.data, &got.data) else {
        return first_difference(want, got);
    };
    let m = magnitude.to_f64_vec();
    for (i, (&x, &y)) in w.iter().zip(g).enumerate() {
        if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
            if !(x.is_nan() && y.is_nan()) && x != y {
                return Some(format!("element {i}: want {x} got {y}"));
            }
            continue;
        }
        let base = x.abs() + 1.0;
        let mag = match m.get(i) {
            Some(v) if v.is_finite() => base.max(v.abs()),
            _ => base,
        };
        let bound = accumulation_bound(x, mag, len, want.dtype);
        if (x - y).abs() > bound {
            return Some(format!(
                "element {i}: want {x} got {y} (|error| {:e} > bound {bound:e})",
                (x - y).abs()
            ));
        }
    }
    None
}

fn compile(file: &str, call: &str) -> Module {
    let source = std::fs::read_to_string(examples_dir().join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    compile_source(&source, call).0
}

/// The module `call` builds from `source`, with the messages of its
/// diagnostics (warnings; errors panic).
fn compile_source(source: &str, call: &str) -> (Module, Vec<String>) {
    let out = py::compile(
        source,
        &py::Options {
            kernel: Some(call.to_string()),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    let messages = out.diagnostics.iter().map(|d| d.message.clone()).collect();
    let module = out
        .module
        .unwrap_or_else(|| panic!("{call}: {:?}", out.diagnostics));
    (module, messages)
}

/// Runs the lowered kernels of `func` (one module holding only it) under
/// the SIMT interpreter for `sim` on seeded inputs and compares every
/// parameter with the reference per `class`. Returns the summed stats.
fn run_and_compare(
    func: &Function,
    lowered: &thread::Module,
    sim: &TargetDescription,
    class: Class,
    what: &str,
) -> Result<Stats, String> {
    run_and_compare_sized(func, lowered, sim, class, what, &BTreeMap::new())
}

/// [`run_and_compare`] with the kernel's symbolic sizes bound to `sizes`.
fn run_and_compare_sized(
    func: &Function,
    lowered: &thread::Module,
    sim: &TargetDescription,
    class: Class,
    what: &str,
    sizes: &interp::SymbolValues,
) -> Result<Stats, String> {
    let given = inputs_sized(func, 7, sizes)?;
    let mut want = given.clone();
    interp::run(func, &mut want).map_err(|e| format!("{what}: interp: {e}"))?;
    let mut got = given.clone();
    let shapes: Vec<Vec<usize>> = got.iter().map(|t| t.shape.clone()).collect();
    let symbols =
        interp::bind_symbols(func, &shapes).map_err(|e| format!("{what}: symbols: {e}"))?;
    let options = SimtOptions {
        symbols,
        ..SimtOptions::default()
    };
    let mut total = Stats::default();
    let given_count = got.len();
    if let Some(first) = lowered.kernels.first() {
        let scratch =
            simt::scratch(first, &got, &options).map_err(|e| format!("{what}: scratch: {e}"))?;
        got.extend(scratch);
    }
    for kernel in &lowered.kernels {
        let stats =
            simt::run(kernel, sim, &mut got, &options).map_err(|e| format!("{what}: simt: {e}"))?;
        total.add(&stats);
    }
    got.truncate(given_count);
    let magnitude = match class {
        Class::Exact => None,
        Class::Accumulation { .. } => {
            let mut abs = absolute(&given);
            interp::run(func, &mut abs).map_err(|e| format!("{what}: interp |x|: {e}"))?;
            Some(abs)
        }
    };
    for (i, ((w, g), before)) in want.iter().zip(&got).zip(&given).enumerate() {
        let untouched = first_difference(before, w).is_none();
        let diff = match (class, &magnitude) {
            (Class::Accumulation { len }, Some(abs)) if !untouched => {
                first_outside_bound(w, g, &abs[i], len)
            }
            _ => first_difference(w, g),
        };
        if let Some(d) = diff {
            return Err(format!("{what}: parameter {i} differs: {d}"));
        }
    }
    Ok(total)
}

/// Lowers, runs under SIMT and compares with the interpreter. `Ok(None)`
/// when the lowering reports `Unsupported`.
fn check_example(
    module: &Module,
    call: &str,
    target_name: &str,
    class: Class,
) -> Result<Option<Stats>, String> {
    let target = target::builtin(target_name).map_err(|e| e.to_string())?;
    let lowered = match lower::to_thread(module, &target) {
        Ok(m) => m,
        Err(LowerError::Unsupported { .. }) => return Ok(None),
        Err(e) => return Err(format!("{call} on {target_name}: {e}")),
    };
    thread::verify_module(&lowered, &target).map_err(|e| format!("{call}: verify: {e}"))?;
    // The printed text reads back to the same module.
    let text = thread::print_module(&lowered);
    let reparsed = thread::parse_module(&text).map_err(|e| format!("{call}: reparse: {e}"))?;
    if thread::print_module(&reparsed) != text {
        return Err(format!("{call}: the printed thread IR does not round-trip"));
    }
    let kernels = module.functions[0]
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s, tilec_core::ir::Stmt::Kernel { .. }))
        .count();
    if lowered.kernels.len() != kernels {
        return Err(format!(
            "{call}: {} thread-level kernels for {kernels} `T.Kernel`s",
            lowered.kernels.len()
        ));
    }
    let what = format!("{call} on {target_name}");
    run_and_compare(&module.functions[0], &lowered, &target, class, &what).map(Some)
}

#[test]
fn examples_match_the_interpreter_on_every_target() {
    let mut failures = Vec::new();
    let mut gaps = Vec::new();
    for &(file, call, class) in EXAMPLES {
        let module = compile(file, call);
        let mut unsupported = 0;
        for t in TARGETS {
            match check_example(&module, call, t, class) {
                Ok(Some(stats)) => {
                    // Every gemm example issues atoms where the target has
                    // usable ones (apple's are `through_memory`).
                    let atoms = class != Class::Exact && t != "apple";
                    if atoms != (stats.mma > 0) {
                        failures.push(format!("{call} on {t}: {} matrix atoms issued", stats.mma));
                    }
                }
                Ok(None) => unsupported += 1,
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

/// `examples/gemm.py` at its default tiles (128×128×32, 128 threads, 3
/// stages) on sm_80: four warps of m16n8k16 atoms, each warp a 64×64 tile
/// with its 32 accumulator fragments resident. `C_local` is only cleared,
/// accumulated into by the one gemm and copied out, so it lives in
/// registers for the whole kernel (`core/src/lower/resident.rs`): no
/// shared buffer, no C loads or stores. The `T.Pipelined` loop keeps three
/// stages of A and B tiles in flight with 16-byte async copies
/// (`pipeline.rs`). One block, two k iterations.
#[test]
fn default_gemm_tiles_use_m16n8k16_atoms_on_sm_80() {
    let call = "matmul(M=128, N=128, K=64, num_stages=3)";
    let module = compile("gemm.py", call);
    let target = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    // One atom per k-step for each of the 4 × 8 atom tiles of a warp's
    // 64×64 tile: 32 mma statements per k-step, and the loop's two k-steps
    // are written out (the second after the barrier that fragment
    // prefetch moves into the loop, `prefetch.rs`).
    assert_eq!(
        text.matches("mma \"mma.m16n8k16\"").count(),
        2 * 32,
        "{text}"
    );
    // The accumulators: a 128-element register array per thread, no
    // shared buffer, and no memory access of C_local anywhere.
    assert!(text.contains("local %C_local: f32[128]"), "{text}");
    assert!(!text.contains("shared %C_local"), "{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.contains("shared") && l.contains("%C_local")),
        "{text}"
    );
    let stats = run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 64 },
        call,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.blocks, 1);
    // 128·128·32 / (16·8·16) = 256 atoms per block and k iteration.
    assert_eq!(stats.mma, 2 * 256);
    // The fragments come from ldmatrix (`ldmatrix.rs`): per warp and
    // k-step, the 4 A tiles' 32 slots in 4 `x4` loads and the 8 B tiles'
    // 32 slots in 4 `x4 trans` loads; 2 k-steps, 2 iterations, 4 warps:
    // 128 loads and no per-lane shared loads. Before, each thread loaded
    // its fragments with 96 shared loads per iteration (4 × 4 `x2` for A,
    // 8 × 4 `x1` for B per k-step): 24,576; with C_local in shared memory,
    // 45,056.
    // With fragment prefetch, every iteration also loads step 0 of the
    // next one, and the last iteration's (of a zero-filled stage) is never
    // used: one more step of loads, (2 · 2 + 1) · 8 per warp.
    assert_eq!(stats.matrix_loads, 8 * (2 * 2 + 1) * 4);
    assert_eq!(stats.shared_loads, 0);
    assert!(
        text.contains("ldmatrix \"ldmatrix.m8n8.b16\" x4 %a_frag"),
        "{text}"
    );
    assert!(
        text.contains("ldmatrix \"ldmatrix.m8n8.b16\" x4 trans %b_frag"),
        "{text}"
    );
    // The A and B tiles arrive by async copies, 4 + 4 vectors of 8 f16 per
    // thread and iteration, into three stages; no shared stores are left
    // (before pipelining, these 2,048 were shared stores after global
    // loads; before resident accumulators, 22,528 stores in all). The two
    // tiles of the prologue are loaded; both iterations issue the copies
    // of the tile two ahead, past the end, which read nothing and
    // zero-fill a stage no one reads (no branch around them).
    assert_eq!(stats.shared_stores, 0);
    assert_eq!(stats.async_copies, 128 * (2 + 2) * (4 + 4));
    // Three stages of the 128×32 A tile and the 32×128 B tile, XOR-swizzled
    // in 64- and 128-byte rows (`swizzle.rs`, "Operands of register
    // atoms"), no longer padded to 80 and 272 bytes: 3 · 128 · 32 and
    // 3 · 32 · 128 elements, aligned to a whole swizzle pattern.
    assert!(
        text.contains("shared %A_shared: f16[12288] align(512)"),
        "{text}"
    );
    assert!(
        text.contains("shared %B_shared: f16[12288] align(1024)"),
        "{text}"
    );
    // Both the matrix loads and the 16-byte async copies meet no bank
    // conflict (with padded rows the copies took 2 passes where 1 does).
    assert_eq!(stats.shared_load_passes, stats.shared_load_passes_ideal);
    assert_eq!(stats.shared_store_passes, stats.shared_store_passes_ideal);
    assert!(stats.shared_store_passes > 0);
    assert!(text.contains("cp_async 16 "), "{text}");
    assert!(text.contains("wait_group 1"), "{text}");
    // The copy out: each thread stores its 128 elements as 64 pairs (x2),
    // converted to f16, straight to C.
    assert_eq!(stats.global_stores, 128 * 64);
    // With the rows padded, every fragment load is served in one pass of
    // the banks per phase (unpadded: 4 for A's 64-byte rows, 8 for B's
    // 256-byte rows, which `banks_of_unpadded_gemm_tiles_conflict` pins).
    // The async copies of A's 16-byte pieces meet two-way conflicts in
    // one of each four phases.
    assert!(stats.shared_load_passes_ideal > 0);
    assert_eq!(
        stats.shared_load_passes, stats.shared_load_passes_ideal,
        "fragment loads with bank conflicts"
    );
}

/// Attention at the benchmark's tiles on sm_90a: every fragment in
/// registers, both gemms on wgmma (P·V with A from the score registers),
/// no block barrier in the key loop, three requested stages kept (they
/// fit with the epilogue's buffer in the K stages' memory) rather than
/// losing wgmma, and the cleared score tile is not filled with zeros.
#[test]
fn attention_runs_on_wgmma_with_fragments_in_registers() {
    let call =
        "flash_attention(4, 32, 4096, 128, block_M=128, block_N=128, num_stages=3, threads=256)";
    let module = compile("flash_attention.py", call);
    let target = target::builtin("sm_90a").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    for f in ["acc_s", "acc_s_cast", "acc_o", "scores_max", "logsum"] {
        assert!(text.contains(&format!("local %{f}: ")), "{f}: {text}");
    }
    // Three stages of 128 × 128 for K and V, and no buffer of its own for
    // the epilogue's staging.
    assert!(text.contains("shared %K_shared: f16[49152]"), "{text}");
    assert!(text.contains("shared %V_shared: f16[49152]"), "{text}");
    assert!(!text.contains("shared %O_shared"), "{text}");
    // P·V: one async_mma per 16 keys, A read from the score registers.
    assert_eq!(text.matches("<- %acc_s_cast[").count(), 8, "{text}");
    // `T.clear(acc_s)` right before Q·Kᵀ is its first k-step's
    // `accumulate false`, not a fill of the 64 registers.
    assert_eq!(text.matches("accumulate false").count(), 1, "{text}");
    assert!(
        !text.lines().any(|l| l.trim().starts_with("%acc_s[%z")),
        "{text}"
    );
    assert!(!text.contains("mma \"mma.m16n8k16\""), "{text}");
    // Stages are released through `empty` barriers, not a block barrier.
    let body = &text[text.find("for %k").expect("key loop")..];
    let body = &body[..body.find("\n  }").expect("loop end")];
    assert!(body.contains("mbarrier_arrive %empty["), "{body}");
    assert!(!body.lines().any(|l| l.trim() == "barrier"), "{body}");
}

#[test]
fn a_producer_warpgroup_feeds_the_pipelines_of_sm90a_unless_disabled() {
    let call =
        "flash_attention(4, 32, 4096, 128, block_M=128, block_N=128, num_stages=2, threads=256)";
    let mut module = compile("flash_attention.py", call);
    let target = target::builtin("sm_90a").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    // 256 consumers and a producer warpgroup that gives its registers to
    // them; one block-wide barrier, publishing the stage barriers.
    assert!(text.contains("threads(384)"), "{text}");
    assert!(text.contains("setmaxnreg dec 24") && text.contains("setmaxnreg inc 240"));
    assert_eq!(text.lines().filter(|l| l.trim() == "barrier").count(), 1);
    // The consumers' loop waits and releases; the Q tile's barrier is
    // before it, and its only numbered barriers are the two warpgroups'
    // turns at `Q·Kᵀ` (ping-pong), numbered from the thread index.
    let body = &text[text.find("for %k from").expect("key loop")..];
    let body = &body[..body.find("\n    }").expect("loop end")];
    assert!(
        !body.contains("bar_sync 1,") && !body.contains("tma_load"),
        "{body}"
    );
    assert!(
        body.contains("bar_sync 2 + thread_idx // 128, 256")
            && body.contains("bar_arrive 3 - thread_idx // 128, 256"),
        "{body}"
    );
    // K and V: two 64-column panels each, issued by the producer only.
    assert_eq!(text.matches("tma_load").count(), 4, "{text}");
    // `tl.disable_warp_specialized` keeps thread 0's refills.
    for f in &mut module.functions {
        f.attrs.pass_configs.insert(
            "tl.disable_warp_specialized".to_string(),
            "True".to_string(),
        );
    }
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(
        text.contains("threads(256)") && !text.contains("setmaxnreg"),
        "{text}"
    );
    assert!(!text.contains("bar_sync"), "{text}");
}

/// A gemm whose operand rows cannot be padded (the operands are also
/// filled, which `pad.rs` does not allow) keeps the 4-way conflicts the
/// padding removes: the bank model sees them.
#[test]
fn banks_of_unpadded_gemm_tiles_conflict() {
    let src = "import tilelang.language as T\n\
def k(M=64, N=64, K=32):\n    \
@T.prim_func\n    \
def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n        \
with T.Kernel(1, threads=128) as bx:\n            \
A_s = T.alloc_shared((M, K), \"float16\")\n            \
B_s = T.alloc_shared((K, N), \"float16\")\n            \
C_l = T.alloc_fragment((M, N), \"float32\")\n            \
T.fill(A_s, 0)\n            \
T.fill(B_s, 0)\n            \
T.copy(A[0, 0], A_s)\n            \
T.copy(B[0, 0], B_s)\n            \
T.clear(C_l)\n            \
T.gemm(A_s, B_s, C_l)\n            \
T.copy(C_l, C[0, 0])\n    \
return main\n";
    let out = py::compile(src, &py::Options::default());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let target = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(text.contains("shared %A_s: f16[2048]"), "{text}");
    let stats = run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 32 },
        "unpadded",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(stats.mma > 0);
    assert!(
        stats.shared_load_passes >= 3 * stats.shared_load_passes_ideal,
        "{} passes for {} ideal",
        stats.shared_load_passes,
        stats.shared_load_passes_ideal
    );
}

/// A result staged through shared memory on its way out (`T.copy(C_l,
/// C_s)` then `T.copy(C_s, C)`): the staging buffer's 256-byte rows are
/// padded to 272 (`pad.rs`), so the accumulator fragment's stores (eight
/// rows per instruction) meet no bank conflicts, and on sm_90a they are
/// `stmatrix` stores of four 8×8 matrices each (`resident.rs`), which sm_80
/// does not have.
/// The benchmark attention tile (128×128, 2 stages, 256 threads) on
/// sm_80: Q, K and V are `ldmatrix` operands in XOR-swizzled rows
/// (`swizzle.rs`, "Operands of register atoms"). Padded, the three tiles
/// and their stages did not fit the shared memory, and the dense 256-byte
/// rows that were left made every matrix load an 8-way bank conflict
/// (279,552 passes where 35,840 do, at `flash_attention(1, 2, 256, 128)`;
/// 5× slower on the H200, `bench/RESULTS.md`). Now every load and every
/// async copy takes one pass.
#[test]
fn attention_operands_are_read_and_filled_without_bank_conflicts_on_sm_80() {
    let call = "flash_attention(1, 1, 256, 128, is_causal=False, block_M=128, block_N=128, \
                num_stages=2, threads=256)";
    let module = compile("flash_attention.py", call);
    let target = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    // 256-byte rows: 128-byte swizzle panels, aligned to a whole pattern.
    for buffer in ["Q_shared", "K_shared", "V_shared"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  shared %{buffer}:")))
            .unwrap_or_else(|| panic!("no {buffer} in {text}"));
        assert!(line.ends_with("align(1024)"), "{line}");
    }
    let stats = run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 256 },
        call,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(stats.matrix_loads > 0);
    assert_eq!(stats.shared_load_passes, stats.shared_load_passes_ideal);
    assert_eq!(stats.shared_store_passes, stats.shared_store_passes_ideal);
}

/// A gemm result copied straight to global memory leaves through shared
/// memory on targets with matrix stores (`epilogue.rs`): `stmatrix` into a
/// staging buffer, then 16-byte vectors of whole rows. At the benchmark's
/// 192×256 tile the staging buffer does not fit beside the four pipeline
/// stages, and takes the memory of a stage after the loop. sm_80 (no
/// matrix stores) keeps the direct stores.
#[test]
fn gemm_results_leave_through_shared_memory_where_matrix_stores_exist() {
    let call = "matmul(M=256, N=256, K=64)";
    let module = compile("gemm.py", call);
    for (name, staged) in [("sm_90a", true), ("sm_80", false)] {
        let target = target::builtin(name).unwrap_or_else(|e| panic!("{e}"));
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
        let text = thread::print_module(&lowered);
        assert_eq!(
            text.contains("shared %C_local_staged: f16["),
            staged,
            "{name}: {text}"
        );
        assert_eq!(
            text.contains("store global x8 %C["),
            staged,
            "{name}: {text}"
        );
        assert_eq!(
            text.contains("store global x2 %C["),
            !staged,
            "{name}: {text}"
        );
        let stats = run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 64 },
            name,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(stats.matrix_stores > 0, staged, "{name}");
    }
    let call = "matmul(M=384, N=512, K=128, block_M=192, block_N=256, block_K=64, num_stages=4, \
                threads=384)";
    let module = compile("gemm.py", call);
    let target = target::builtin("sm_90a").unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(!text.contains("shared %C_local_staged"), "{text}");
    assert!(text.contains("stmatrix"), "{text}");
    assert!(text.contains("store global x8 %C["), "{text}");
    run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 128 },
        call,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn staged_results_are_stored_without_bank_conflicts() {
    let src = "import tilelang.language as T\n\
def k(M=64, N=128, K=32):\n    \
@T.prim_func\n    \
def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n        \
with T.Kernel(1, threads=128) as bx:\n            \
A_s = T.alloc_shared((M, K), \"float16\")\n            \
B_s = T.alloc_shared((K, N), \"float16\")\n            \
C_s = T.alloc_shared((M, N), \"float16\")\n            \
C_l = T.alloc_fragment((M, N), \"float32\")\n            \
T.copy(A[0, 0], A_s)\n            \
T.copy(B[0, 0], B_s)\n            \
T.clear(C_l)\n            \
T.gemm(A_s, B_s, C_l)\n            \
T.copy(C_l, C_s)\n            \
T.copy(C_s, C[0, 0])\n    \
return main\n";
    let out = py::compile(src, &py::Options::default());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    for (name, stmatrix) in [("sm_80", false), ("sm_90a", true)] {
        let target = target::builtin(name).unwrap_or_else(|e| panic!("{e}"));
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
        let text = thread::print_module(&lowered);
        assert!(text.contains("shared %C_s: f16[8704]"), "{name}: {text}");
        assert_eq!(
            text.contains("stmatrix \"stmatrix.m8n8.b16\" x4 %C_s"),
            stmatrix,
            "{name}: {text}"
        );
        let stats = run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 32 },
            name,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // 64 × 128 elements in 8×8 matrices, four per instruction, by the
        // warps that hold them.
        assert_eq!(
            stats.matrix_stores,
            if stmatrix { 64 * 128 / 256 } else { 0 }
        );
        // Unpadded, each of the 128 staging stores of 8 rows 256 bytes
        // apart would take 8 passes of the banks instead of 1 (896 extra);
        // what remains are the copies into A_s's 80-byte rows.
        let extra = stats.shared_store_passes - stats.shared_store_passes_ideal;
        assert!(
            stats.shared_store_passes_ideal > 0 && extra <= 32,
            "{name}: {} store passes for {} ideal",
            stats.shared_store_passes,
            stats.shared_store_passes_ideal
        );
    }
}

/// The matrix-atom path through a deliberately wrong A fragment (two slot
/// modes swapped, still a valid fragment) must be caught by the
/// comparison: the lowering follows the wrong map, the SIMT interpreter
/// the true one.
#[test]
fn a_wrong_fragment_map_is_detected() {
    let call = "matmul(M=64, N=64, K=64, block_M=64, block_N=64, block_K=32)";
    let module = compile("gemm.py", call);
    let good = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let mut wrong = good.clone();
    let atom = &mut wrong.matrix_atoms[0];
    assert_eq!(atom.name, "mma.m16n8k16");
    atom.a.fragment = Some(
        "((4,8),(2,2,2)):((32,1),(8,16,128))"
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}")),
    );
    let frag = atom
        .fragment(OperandRole::A)
        .unwrap_or_else(|e| panic!("{e}"));
    frag.expect("a fragment")
        .check()
        .unwrap_or_else(|e| panic!("the altered fragment must stay valid: {e}"));
    let class = Class::Accumulation { len: 64 };
    let func = &module.functions[0];
    let right = lower::to_thread(&module, &good).unwrap_or_else(|e| panic!("{e}"));
    run_and_compare(func, &right, &good, class, call).unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower::to_thread(&module, &wrong).unwrap_or_else(|e| panic!("{e}"));
    match run_and_compare(func, &lowered, &good, class, call) {
        Err(e) => assert!(e.contains("outside") || e.contains("differs"), "{e}"),
        Ok(_) => panic!("a wrong A fragment map went unnoticed"),
    }
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

/// File cases whose outputs come from a `gemm` on matrix atoms, with the
/// reduction length of their accumulation bound (file stem, K); every
/// other file case compares bit for bit.
const FILE_CLASSES: &[(&str, u64)] = &[
    ("gemm_atoms.gfx942", 32),
    ("gemm_atoms.sm_80", 32),
    ("gemm_fallback.apple", 16),
    ("gemm_fallback.sm_80", 16),
    ("gemm_idle_groups.sm_90a", 48),
    ("gemm_wgmma.sm_90a", 384),
    ("gemm_wgmma_cp_async.sm_90a", 384),
    ("gemm_wgmma_cp_async_late.sm_90a", 640),
    ("gemm_prefetch.sm_80", 200),
    ("gemm_prefetch_two.sm_80", 200),
    ("gemm_mfma32.gfx942", 48),
    ("mapped_layouts.gfx942", 64),
    ("mapped_layouts.sm_80", 64),
    ("gemm_per_tile.sm_80", 32),
    ("roles_gemm.sm_80", 80),
    ("roles_loader_first.sm_90a", 80),
    ("gemm_resident.sm_80", 64),
    ("gemm_resident_clear.gfx942", 32),
    ("gemm_resident_fallback.sm_80", 32),
    ("gemm_resident_reduce.sm_80", 32),
    ("attention_regs.sm_80", 64),
    ("attention_regs.gfx942", 64),
    ("attention_wgmma.sm_90a", 128),
    ("rows_fallback.sm_80", 16),
    ("gemm_slices.sm_80", 64),
    ("gemm_trans_a.gfx942", 32),
    ("pipeline_lists.sm_80", 160),
    ("pipeline_lists_deep.sm_80", 160),
    ("pipeline_lists_interleaved.sm_80", 160),
    ("pipeline_lists.gfx942", 160),
    ("pipeline_lists.sm_90a", 160),
];

/// The comparison class of a file case.
fn file_class(path: &Path) -> Class {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    FILE_CLASSES
        .iter()
        .find(|(name, _)| *name == stem)
        .map_or(Class::Exact, |&(_, len)| Class::Accumulation { len })
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
        // The expectation is lowered code that runs, and computes what the
        // reference computes.
        if let Ok(m) = thread::parse_module(&got) {
            thread::verify_module(&m, &target)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        }
        let class = file_class(&file);
        for func in &module.functions {
            if !func.symbols.is_empty() {
                continue;
            }
            let single = Module {
                functions: vec![func.clone()],
            };
            let Ok(lowered) = lower::to_thread(&single, &target) else {
                continue;
            };
            let what = format!("{} (@{})", file.display(), func.name);
            if let Err(e) = run_and_compare(func, &lowered, &target, class, &what) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "lowered text differs (TILEC_BLESS=1 to re-bless) or runs wrong:\n{}",
        failures.join("\n")
    );
}

/// Element-wise fragments in registers (`spread.rs`) and reductions by
/// thread groups (`reduce.rs`) over a sweep of shapes and thread counts, on
/// a warp-32 and a wave-64 target: copy in (f16 → f32), row maximum, an
/// element-wise nest, row sum, copy out. Every case must compute what the
/// reference computes (sums within the accumulation bound of the row
/// length), and the sweep must include cases taken in registers with and
/// without cross-warp exchanges.
#[test]
fn spread_fragments_and_group_reductions_over_shapes() {
    let mut failures = Vec::new();
    let (mut spread, mut scratch) = (0, 0);
    for target_name in ["sm_80", "gfx942"] {
        let target = target::builtin(target_name).unwrap_or_else(|e| panic!("{e}"));
        for threads in [64, 128, 256] {
            for (rows, n) in [
                (1, 4096),
                (2, 2048),
                (3, 96),
                (4, 64),
                (8, 256),
                (5, 24),
                (1, 7),
                (16, 16),
            ] {
                let text = format!(
                    "tile_ir 0.1\n\nfunc @main(%X: global f16[{rows}, {n}], %Y: global f32[{rows}, {n}], %M: global f32[{rows}], %S: global f32[{rows}]) {{\n  kernel grid(1) threads({threads}) block(%bx) thread(%tx) {{\n    alloc %x: fragment f32[{rows}, {n}]\n    alloc %m: fragment f32[{rows}]\n    alloc %s: fragment f32[{rows}]\n    copy %X[0 +: {rows}, 0 +: {n}] -> %x[0 +: {rows}, 0 +: {n}]\n    reduce max %x -> %m, dim=1, clear=true\n    parallel (%i < {rows}, %j < {n}) {{\n      %x[%i, %j] = %x[%i, %j] - %m[%i]\n    }}\n    reduce sum %x -> %s, dim=1, clear=true\n    copy %x[0 +: {rows}, 0 +: {n}] -> %Y[0 +: {rows}, 0 +: {n}]\n    copy %m[0 +: {rows}] -> %M[0 +: {rows}]\n    copy %s[0 +: {rows}] -> %S[0 +: {rows}]\n  }}\n}}\n"
                );
                let module =
                    tilec_core::text::parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                let what = format!("rows {rows}, n {n}, {threads} threads on {target_name}");
                let lowered = match lower::to_thread(&module, &target) {
                    Ok(m) => m,
                    Err(e) => {
                        failures.push(format!("{what}: {e}"));
                        continue;
                    }
                };
                let printed = thread::print_module(&lowered);
                if printed.contains("local %x:") {
                    spread += 1;
                    if printed.contains("reduce_scratch") {
                        scratch += 1;
                    }
                }
                let class = Class::Accumulation { len: n as u64 };
                if let Err(e) =
                    run_and_compare(&module.functions[0], &lowered, &target, class, &what)
                {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        spread >= 20,
        "only {spread} cases kept the fragment in registers"
    );
    assert!(
        scratch >= 5,
        "only {scratch} spread cases exchanged partials across warps"
    );
}

/// The passes that record the lowering's choices (`infer-layouts`,
/// `inject-pipeline`, `warp-specialize`) annotate every buffer and
/// pipelined loop, and lowering the annotated IR gives the same thread IR
/// as lowering the original: the annotations are the choices, and pinning
/// them changes nothing. Checked on the examples (small and benchmark
/// tiles) for every target.
#[test]
fn recorded_choices_lower_to_the_same_kernels() {
    use tilec_core::ir::{LoopKind, Stmt};
    use tilec_core::passes::{PassContext, Pipeline};
    let mut calls: Vec<(&str, &str)> = EXAMPLES.iter().map(|&(f, c, _)| (f, c)).collect();
    calls.extend([
        (
            "gemm.py",
            "matmul(512, 512, 512, block_M=128, block_N=256, block_K=32, num_stages=3, threads=256)",
        ),
        (
            "gemm.py",
            "matmul(512, 512, 512, block_M=128, block_N=256, block_K=64, num_stages=4, threads=256)",
        ),
        (
            "flash_attention.py",
            "flash_attention(1, 2, 512, 128, is_causal=True, block_M=128, block_N=128, num_stages=2, threads=256)",
        ),
        // Fits sm_90a's shared memory only with the epilogue's buffer in
        // the stages' memory.
        (
            "flash_attention.py",
            "flash_attention(1, 2, 512, 128, block_M=128, block_N=128, num_stages=3, threads=256)",
        ),
    ]);
    let pipeline =
        Pipeline::parse("infer-layouts,inject-pipeline,warp-specialize").expect("registered");
    let mut failures = Vec::new();
    for (file, call) in calls {
        let module = compile(file, call);
        for t in TARGETS {
            let target = target::builtin(t).expect("built-in target");
            let Ok(plain) = lower::to_thread(&module, &target) else {
                continue;
            };
            let mut annotated = module.clone();
            let mut cx = PassContext::default();
            cx.target = Some(target.clone());
            if let Err(e) = pipeline.run(&mut annotated, &cx) {
                failures.push(format!("{call} on {t}: {}", e.error));
                continue;
            }
            let f = &annotated.functions[0];
            let mut unannotated = Vec::new();
            f.body.walk(&mut |s, _| match s {
                Stmt::Alloc { buffer, .. } if f.buffers[*buffer].layout.is_none() => {
                    unannotated.push(f.buffers[*buffer].name.clone())
                }
                Stmt::For {
                    var,
                    kind: LoopKind::Pipelined { schedule: None, .. },
                    ..
                } => unannotated.push(f.vars[*var].name.clone()),
                _ => {}
            });
            if !unannotated.is_empty() {
                failures.push(format!("{call} on {t}: not annotated: {unannotated:?}"));
            }
            match lower::to_thread(&annotated, &target) {
                Ok(pinned) if thread::print_module(&pinned) == thread::print_module(&plain) => {}
                Ok(_) => failures.push(format!("{call} on {t}: the pinned lowering differs")),
                Err(e) => failures.push(format!("{call} on {t}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Pinned choices are realized, and what they give still computes what
/// the reference does: a gemm accumulator pinned to shared memory
/// (through-memory atoms), a stage count below the loop's, a padding
/// other than `pad.rs`'s. An unrealizable pin is an error at the buffer.
#[test]
fn pinned_layouts_and_schedules_are_realized() {
    use tilec_core::ir::{BufferLayout, LoopKind, PipelineSchedule, Stmt};
    let call = "matmul(M=64, N=72, K=96, block_M=64, block_N=64, block_K=32, trans_B=True)";
    let mut module = compile("gemm.py", call);
    let target = target::builtin("sm_80").expect("built-in target");
    let f = &mut module.functions[0];
    let named = |f: &Function, name: &str| {
        f.buffers
            .iter()
            .find(|(_, b)| b.name == name)
            .map(|(h, _)| h)
            .expect("buffer")
    };
    let (c, a) = (named(f, "C_local"), named(f, "A_shared"));
    f.buffers[c].layout = Some(BufferLayout::Shared);
    f.buffers[a].layout = Some(BufferLayout::Padded { pitch: 48 });
    f.body.walk_mut(&mut |s| {
        if let Stmt::For {
            kind: LoopKind::Pipelined { schedule, .. },
            ..
        } = s
        {
            *schedule = Some(PipelineSchedule::Async { stages: 2 });
        }
    });
    let lowered = lower::to_thread(&module, &target).expect("pinned choices lower");
    let kernel = &lowered.kernels[0];
    let shared = |name: &str| {
        kernel
            .shared
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no shared buffer {name}"))
    };
    // C in shared memory; A in two stages of 64 rows of 48 elements.
    assert_eq!(shared("C_local").len, 64 * 64);
    assert_eq!(shared("A_shared").len, 2 * 64 * 48);
    let text = thread::print_module(&lowered);
    assert!(
        text.contains("wait_group 0"),
        "two stages wait for 0 groups"
    );
    let stats = run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 96 },
        call,
    )
    .expect("pinned lowering matches the reference");
    assert!(stats.mma > 0);

    // A gemm accumulator cannot be spread over threads like an
    // element-wise fragment: refused at its allocation.
    let f = &mut module.functions[0];
    f.buffers[c].layout = Some(BufferLayout::Spread { vector: 4 });
    let span = f.buffer_spans[c.index()];
    match lower::to_thread(&module, &target) {
        Err(LowerError::Pin { message, span: at }) => {
            assert!(
                message.contains("`C_local` is pinned to layout `spread(4)`"),
                "{message}"
            );
            assert_eq!(at, span);
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}

/// Attention with 128 × 128 tiles and three stages needs 258 KiB of
/// shared memory with every buffer in its own; sm_90a has 227. The
/// epilogue's staging buffer is used only after the loop, so it takes
/// the memory of the K stages (live only in the loop) instead of a stage
/// being dropped, and the result still matches the reference under the
/// SIMT interpreter (which orders the overwrite of TMA-written stages by
/// their barrier phase and the loop's last reads by a barrier).
#[test]
fn an_epilogue_buffer_reuses_the_stages_of_the_loop_before_it() {
    let call =
        "flash_attention(1, 1, 256, 128, block_M=128, block_N=128, num_stages=3, threads=256)";
    let module = compile("flash_attention.py", call);
    let target = target::builtin("sm_90a").expect("built-in target");
    let lowered = lower::to_thread(&module, &target).expect("lowers");
    let kernel = &lowered.kernels[0];
    let names: Vec<&str> = kernel.shared.iter().map(|s| s.name.as_str()).collect();
    assert!(!names.contains(&"O_shared"), "{names:?}");
    let k = kernel
        .shared
        .iter()
        .find(|s| s.name == "K_shared")
        .expect("K stages");
    assert_eq!(k.len, 3 * 128 * 128, "three stages of K");
    let bytes: u64 = kernel.shared.iter().map(|s| s.len * s.dtype.bytes()).sum();
    assert!(bytes <= 227 * 1024, "{bytes} bytes");
    run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 256 },
        call,
    )
    .expect("matches the reference");
}

/// FA3's rotated attention loop (`Q·Kᵀ` of key block `k` issued before
/// the rescale and `P·V` of block `k − 1`, the softmax of `k` after them)
/// is rotated as its lists ask (pass config `tilec.follow_pipeline_lists`
/// set to `False`: as without lists, quietly): one loop of one more
/// iteration whose copies stay pipelined (cp.async on sm_80, bulk copies
/// on sm_90a, registers on gfx942) and whose consumers run for `k − σ`;
/// where the copies are asynchronous its first and last iterations are
/// peeled off the guard-free middle, which on sm_90a keeps the producer
/// warp group and the consumers' ping-pong turns. It matches the
/// reference under the SIMT interpreter, also with a single key block
/// (the middle empty). The same lists with every stage one higher (the
/// copies at 0 rather than negative) are the same rotation. Lists with
/// producers marked negative and one consumer stage lower as the loop
/// without lists, and lists whose
/// rotation would reorder two statements using one buffer (the softmax of
/// `k` writing `acc_s_cast` before `P·V` of `k − 1` reads it) are not
/// followed, with a warning naming the buffer.
#[test]
fn attention_with_rotating_group_lists_is_rotated() {
    let source = std::fs::read_to_string(examples_dir().join("flash_attention.py"))
        .unwrap_or_else(|e| panic!("flash_attention.py: {e}"));
    let plain = "T.Pipelined(key_blocks(bx), num_stages=num_stages)";
    assert!(source.contains(plain), "the example's loop changed");
    let groups = "group=[[0], [1, 2], [3, 4, 5, 6, 7, 8, 9, 10, 11], [12], [13], [14]]";
    let with_lists = |order: &str, stage: &str| {
        source.replace(
            plain,
            &format!(
                "T.Pipelined(key_blocks(bx), num_stages=num_stages, order={order}, stage={stage}, {groups})"
            ),
        )
    };
    let asked = with_lists("[-1, 0, 3, 1, -1, 2]", "[-1, 0, 0, 1, -1, 1]");
    let jit = "@tilelang.jit(out_idx=[3])";
    assert!(asked.contains(jit), "the example's decorator changed");
    let opted_out = asked.replace(
        jit,
        "@tilelang.jit(out_idx=[3], pass_configs={\"tilec.follow_pipeline_lists\": False})",
    );
    let asked_explicitly = asked.replace(
        jit,
        "@tilelang.jit(out_idx=[3], pass_configs={\"tilec.follow_pipeline_lists\": True})",
    );
    // The same schedule with the copies at stage 0 and the rest one
    // stage later (no negative stage: the copies at the lowest stage are
    // the producers).
    let shifted = with_lists("[-1, 0, 3, 1, -1, 2]", "[0, 1, 1, 2, 0, 2]");
    let producers = with_lists("[-1, 0, 1, 2, -1, 3]", "[-1, 0, 0, 0, -1, 0]");
    let reordering = with_lists("[-1, 0, 1, 2, -1, 3]", "[-1, 0, 0, 0, -1, 1]");
    let call = "flash_attention(1, 2, 256, 64, block_M=64, block_N=64, num_stages=2, threads=128)";
    let (base, none) = compile_source(&source, call);
    let (rot, quiet_rot) = compile_source(&asked, call);
    let (explicit, quiet_explicit) = compile_source(&asked_explicitly, call);
    let (shift, quiet_shift) = compile_source(&shifted, call);
    let (prod, quiet) = compile_source(&producers, call);
    let (reord, warned) = compile_source(&reordering, call);
    let (out, quiet_out) = compile_source(&opted_out, call);
    assert!(
        none.is_empty()
            && quiet.is_empty()
            && quiet_rot.is_empty()
            && quiet_explicit.is_empty()
            && quiet_shift.is_empty()
            && quiet_out.is_empty(),
        "{none:?} {quiet:?} {quiet_rot:?} {quiet_explicit:?} {quiet_shift:?} {quiet_out:?}"
    );
    assert!(
        warned.len() == 1
            && warned[0].contains("both use `acc_s_cast`, and the lists would reorder"),
        "{warned:?}"
    );
    // (Apple GPUs' 32 KiB of threadgroup memory do not hold these tiles.)
    for (name, pipelined) in [
        ("sm_80", "cp_async"),
        ("sm_90a", "tma_load"),
        ("gfx942", "barrier"),
    ] {
        let target = target::builtin(name).unwrap_or_else(|e| panic!("{e}"));
        let lower = |m: &Module| lower::to_thread(m, &target).unwrap_or_else(|e| panic!("{e}"));
        let want = thread::print_module(&lower(&base));
        assert!(want.contains("for %k"), "{want}");
        for (module, what) in [
            (&prod, "producer lists"),
            (&reord, "unfollowed lists"),
            (&out, "lists turned off"),
        ] {
            assert_eq!(
                thread::print_module(&lower(module)),
                want,
                "{what} on {name}"
            );
        }
        let lowered = lower(&rot);
        let text = thread::print_module(&lowered);
        assert_ne!(text, want, "rotated lists on {name}");
        for (module, what) in [
            (&explicit, "rotation asked for explicitly"),
            (&shift, "rotation without negative stages"),
        ] {
            assert_eq!(
                thread::print_module(&lower(module)),
                text,
                "{what} on {name}"
            );
        }
        assert!(
            text.contains(pipelined),
            "{name}: the rotated loop is not pipelined\n{text}"
        );
        // The head, the middle (from 1: one iteration peeled) and the
        // tail; on gfx942 (synchronous copies) one guarded loop.
        let loops: usize = ["for %k from", "for %k_mid", "for %k_tail"]
            .iter()
            .map(|l| text.matches(l).count())
            .sum();
        let peeled = name != "gfx942";
        assert_eq!(loops, if peeled { 3 } else { 1 }, "{name}\n{text}");
        if peeled {
            assert!(text.contains(" from 1 count "), "{name}: no middle\n{text}");
        }
        if name == "sm_90a" {
            // A producer warp group (giving its registers back).
            assert!(
                text.contains("setmaxnreg dec"),
                "{name}: no producer\n{text}"
            );
        }
        run_and_compare(
            &rot.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 256 },
            &format!("rotated attention on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // One key block: the head and the tail, no middle.
        let one =
            "flash_attention(1, 1, 64, 64, block_M=64, block_N=64, num_stages=2, threads=128)";
        let (single, _) = compile_source(&asked, one);
        run_and_compare(
            &single.functions[0],
            &lower(&single),
            &target,
            Class::Accumulation { len: 64 },
            &format!("rotated attention over one key block on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    // Two consumer warpgroups take turns in the middle iterations only.
    let two = "flash_attention(1, 1, 256, 64, block_M=128, block_N=64, num_stages=2, threads=256)";
    let (pair, _) = compile_source(&asked, two);
    let target = target::builtin("sm_90a").unwrap_or_else(|e| panic!("{e}"));
    let text =
        thread::print_module(&lower::to_thread(&pair, &target).unwrap_or_else(|e| panic!("{e}")));
    let turn = "bar_sync 2 + thread_idx // 128, 256";
    let (head, rest) = text
        .split_once("for %k_mid")
        .unwrap_or_else(|| panic!("no middle loop\n{text}"));
    let (middle, tail) = rest
        .split_once("for %k_tail")
        .unwrap_or_else(|| panic!("no tail loop\n{text}"));
    assert!(
        middle.contains(turn) && !head.contains(turn) && !tail.contains(turn),
        "turns outside the middle, or none in it\n{text}"
    );
}

/// A `T.Pipelined` GEMM loop written as TileLang's manual-schedule form —
/// `stage`/`order` without `num_stages` (the depth is one more than the
/// largest stage) and a replayable bind (`base = k * block_K`) the lists
/// leave out — lowers exactly as the same loop with `num_stages=2` and the
/// index written inline: pipelined with async copies (the bind is
/// substituted where it is used, so the copies start the body), matching
/// the reference. Before, the lists went unfollowed (no depth) and the
/// bind kept the copies from being pipelined at all.
#[test]
fn manual_schedule_lists_with_binds_are_followed() {
    const TEMPLATE: &str = r#"import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def mm(M=96, N=64, K=160):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            T.clear(acc)
            for k in HEAD:
BIND                T.copy(A[by * 64, INDEX], A_s)
                T.copy(B[INDEX, bx * 64], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * 64, bx * 64])

    return main
"#;
    let source = |head: &str, bind: &str, index: &str| {
        TEMPLATE
            .replace("HEAD", head)
            .replace("BIND", bind)
            .replace("INDEX", index)
    };
    let call = "mm()";
    let manual = source(
        "T.Pipelined(T.ceildiv(K, 32), stage=[0, 0, 1], order=[0, 1, 2])",
        "                base: T.int32 = k * 32\n",
        "base",
    );
    let inline = source(
        "T.Pipelined(T.ceildiv(K, 32), num_stages=2, stage=[0, 0, 1], order=[0, 1, 2])",
        "",
        "k * 32",
    );
    let (m, quiet) = compile_source(&manual, call);
    let (i, _) = compile_source(&inline, call);
    assert!(quiet.is_empty(), "{quiet:?}");
    let target = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let lower =
        |module: &Module| lower::to_thread(module, &target).unwrap_or_else(|e| panic!("{e}"));
    let lowered = lower(&m);
    let text = thread::print_module(&lowered);
    assert_eq!(text, thread::print_module(&lower(&i)));
    assert!(text.contains("cp_async"), "not pipelined\n{text}");
    run_and_compare(
        &m.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 160 },
        "manual schedule with a bind",
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// `examples/gemm_ws.py` (roles handing stages over through phased
/// barriers) runs on the NVIDIA targets, issuing atoms from the
/// multiplier's threads only, and is refused where the target has no
/// phased barriers; roles of unequal sizes and a fragment shared by two
/// roles are refused naming what is wrong.
#[test]
fn explicit_roles_lower_where_phased_barriers_exist() {
    let call = "matmul_ws(M=72, N=40, K=80, block_M=64, block_N=32, block_K=16)";
    let module = compile("gemm_ws.py", call);
    for t in ["sm_80", "sm_90a"] {
        let stats = check_example(&module, call, t, Class::Accumulation { len: 80 })
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{call} unsupported on {t}"));
        assert!(stats.mma > 0, "{t}: no matrix atoms");
    }
    // A half-precision accumulator takes no atom: every multiplier thread
    // reads every row of the A stage, more readers per element than the
    // interpreter tracks one by one, released through `consumed` all the
    // same (it used to be reported as a race).
    let half =
        "matmul_ws(M=72, N=40, K=80, block_M=64, block_N=32, block_K=16, accum_dtype=\"float16\")";
    let module_half = compile("gemm_ws.py", half);
    for t in ["sm_80", "sm_90a"] {
        check_example(&module_half, half, t, Class::Accumulation { len: 80 })
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{half} unsupported on {t}"));
    }
    for t in ["gfx942", "apple"] {
        let target = target::builtin(t).unwrap_or_else(|e| panic!("{e}"));
        match lower::to_thread(&module, &target) {
            Err(e @ LowerError::Unsupported { .. }) => {
                assert!(e.to_string().contains("no phased barriers"), "{t}: {e}");
            }
            other => panic!("{t}: expected a refusal, got {other:?}"),
        }
    }
    let source = std::fs::read_to_string(examples_dir().join("gemm_ws.py")).expect("example");
    let sm_80 = target::builtin("sm_80").unwrap_or_else(|e| panic!("{e}"));
    let refusal = |source: &str| match lower::to_thread(&compile_source(source, call).0, &sm_80) {
        Err(e @ LowerError::Unsupported { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    };
    // A loader of two warp groups beside a one-group multiplier.
    let wide = source
        .replace("threads=256", "threads=384")
        .replace("with T.ws(1):", "with T.ws(1, 2):");
    assert!(
        refusal(&wide).contains("roles of different sizes"),
        "{}",
        refusal(&wide)
    );
    // A barrier inside a role synchronises the role's 128 threads on its
    // own numbered barrier (the multiplier is the first role met: 1).
    let synced = source.replace(
        "                    T.barrier_arrive(consumed[s])",
        "                    T.sync_threads()\n                    T.barrier_arrive(consumed[s])",
    );
    let (module, _) = compile_source(&synced, call);
    check_example(&module, call, "sm_80", Class::Accumulation { len: 80 })
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("lowers");
    let text = thread::print_module(&lower::to_thread(&module, &sm_80).expect("lowers"));
    assert!(text.contains("bar_sync 1, 128"), "{text}");
    // The loader clears the multiplier's accumulator.
    let shared = source.replace(
        "            with T.ws(0):\n                T.clear(C_local)",
        "            with T.ws(1):\n                T.clear(C_local)",
    );
    assert!(
        refusal(&shared).contains("`C_local`"),
        "{}",
        refusal(&shared)
    );
}

/// `T.Layout` maps that are none of the built-in layouts (`mapped.rs`),
/// on every target: the memory is as long as the map's span, accesses to
/// a buffer whose map reverses its columns move single elements, and the
/// kernels (a pipelined gemm, reductions from shared and register buffers
/// and a scan into mapped buffers, a gemm on a slice of a 3-D mapped
/// buffer) compute what the reference does.
#[test]
fn mapped_layouts_are_followed_on_every_target() {
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        for (call, class) in [
            ("gemm()", Class::Accumulation { len: 64 }),
            ("rows()", Class::Accumulation { len: 32 }),
            ("slices()", Class::Accumulation { len: 64 }),
        ] {
            let (module, warnings) = compile_source(MAPPED, call);
            assert!(warnings.is_empty(), "{warnings:?}");
            let lowered =
                lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
            let kernel = &lowered.kernels[0];
            let len = |buffer: &str| {
                kernel
                    .shared
                    .iter()
                    .find(|s| s.name == buffer)
                    .map(|s| s.len)
            };
            if call == "gemm()" {
                // 31 rows 36 apart and one of 32.
                assert_eq!(len("C_s"), Some(31 * 36 + 32), "{name}");
                let text = thread::print_module(&lowered);
                for line in text.lines().filter(|l| l.contains("%C_s[")) {
                    assert!(
                        line.contains(" x1 "),
                        "{name}: a reversed row moved as a vector: {line}"
                    );
                }
            } else if call == "rows()" {
                assert_eq!(len("Ss"), Some(16), "{name}");
            } else {
                assert_eq!(len("S"), Some(2 * 32 * 64), "{name}");
            }
            run_and_compare(
                &module.functions[0],
                &lowered,
                &target,
                class,
                &format!("{call} on {name}"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// A `T.Layout` on a global buffer (the flash-attention backward's `dQ`,
/// reordered to the 8x8 fragments that add into it), on every target:
/// copies out of it, element and tile atomic adds into it and element
/// reads and stores address the caller's tensor through the map, so the
/// raw memory the kernels leave equals the reference's. The map scatters
/// neighbouring columns, so no access to it moves a vector.
#[test]
fn global_mapped_layouts_are_followed_on_every_target() {
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        for (call, class) in [
            ("post()", Class::Exact),
            ("accum()", Class::Accumulation { len: 16 }),
            ("rescale()", Class::Exact),
        ] {
            let (module, warnings) = compile_source(GLOBAL_MAPPED, call);
            assert!(warnings.is_empty(), "{warnings:?}");
            let func = &module.functions[0];
            assert!(
                func.buffers
                    .iter()
                    .any(|(_, b)| b.name == "dQ" && b.layout.is_some()),
                "{call}: dQ is not pinned"
            );
            let lowered = lower::to_thread(&module, &target)
                .unwrap_or_else(|e| panic!("{name}: {call}: {e}"));
            let text = thread::print_module(&lowered);
            for line in text.lines().filter(|l| l.contains("%dQ[")) {
                assert!(
                    !line.contains(" x2 ") && !line.contains(" x4 ") && !line.contains(" x8 "),
                    "{name}: {call}: a vector access to the mapped dQ: {line}"
                );
            }
            run_and_compare(func, &lowered, &target, class, &format!("{call} on {name}"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Regions whose extent is a difference of the kernel's binds (`H0:H1`
/// with `H1 = H0 + 16`) lower with the constant extent, and fills of a
/// region whose ends are run-time values (`x[a:b]`, clamped at the
/// buffer's edge) with a loop of run-time count, on every
/// target, as the reference computes them.
#[test]
fn bound_and_run_time_extents_lower_on_every_target() {
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        for call in [
            "slices()",
            "fills(lo=3, hi=50)",
            "fills(lo=10, hi=10)",
            "fills(lo=-5, hi=200)",
        ] {
            let (module, _) = compile_source(EXTENTS, call);
            let lowered = lower::to_thread(&module, &target)
                .unwrap_or_else(|e| panic!("{name}: {call}: {e}"));
            run_and_compare(
                &module.functions[0],
                &lowered,
                &target,
                Class::Exact,
                &format!("{call} on {name}"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// A copy between a region of run-time extent and a constant on-chip
/// buffer loops over the on-chip buffer, as TileLang's does: `A[0:n]`
/// into 64 elements reads `A[i]` inside `A` and zero past its end, and
/// writes all 64 (also when `n` is larger); the shared side of a copy
/// out bounds the global one the same way. On every target, against the
/// reference, whose copy applies the same rule.
#[test]
fn copies_of_run_time_extent_loop_over_the_on_chip_side() {
    let (module, _) = compile_source(RUN_TIME_COPY, "prefix()");
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        for n in [0, 1, 40, 64, 100] {
            let sizes = interp::SymbolValues::from([("n".to_string(), n)]);
            run_and_compare_sized(
                &module.functions[0],
                &lowered,
                &target,
                Class::Exact,
                &format!("n = {n} on {name}"),
                &sizes,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // The reference itself: `B` past `n` is zero (not the fill's 7), and
    // `C` takes `S` only where `C` has elements.
    let func = &module.functions[0];
    let sizes = interp::SymbolValues::from([("n".to_string(), 40)]);
    let mut tensors = inputs_sized(func, 3, &sizes).expect("inputs");
    let a = tensors[0].data.clone();
    interp::run(func, &mut tensors).expect("runs");
    let (TensorData::Int(a), TensorData::Int(b)) = (&a, &tensors[1].data) else {
        panic!("int tensors");
    };
    assert_eq!(&b[..40], &a[..]);
    assert!(b[40..].iter().all(|&v| v == 0), "{b:?}");
}

/// A copy of a run-time-length prefix into a constant shared buffer.
const RUN_TIME_COPY: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def prefix():
    n = T.symbolic("n")

    @T.prim_func
    def prefix_copy(A: T.Tensor((n,), "int32"), B: T.Tensor((64,), "int32"), C: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((64,), "int32")
            T.fill(S, 7)
            T.copy(A[0:n], S)
            T.copy(S, B)
            for i in T.Parallel(64):
                S[i] = S[i] + 1
            T.copy(S, C[0:n])
    return prefix_copy
"#;

/// Kernels whose regions have extents that are not literals.
const EXTENTS: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def slices(M=64, N=24):
    @T.prim_func
    def slices_bound(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(2, 2, threads=32) as (bx, by):
            S = T.alloc_shared((16, N), "float32")
            H0 = by * 32 + bx * 16
            H1 = H0 + 16
            T.copy(A[H0:H1, :], S)
            for i, j in T.Parallel(16, N):
                S[i, j] = S[i, j] * 3
            T.copy(S, B[H0:H1, :])
    return slices_bound


@tilelang.jit
def fills(lo=3, hi=50, M=4, N=37):
    @T.prim_func
    def fills_dynamic(x: T.Tensor((N,), "int32"), y: T.Tensor((M, N), "float32"), z: T.Tensor((N,), "float32")):
        with T.Kernel(M, threads=32) as bx:
            a = T.alloc_var(T.int32)
            b = T.alloc_var(T.int32)
            S = T.alloc_shared((N,), "float32")
            a = lo + x[0] * 0
            b = hi + x[1] * 0
            T.fill(S, 1)
            T.fill(S[a:b], 7)
            T.copy(S, y[bx, :])
            if bx == 0:
                T.fill(z[a:b], -2)
    return fills_dynamic
"#;

/// Kernels reading and writing a global buffer in a `T.Layout`.
const GLOBAL_MAPPED: &str = r#"
import tilelang
import tilelang.language as T


def dq_layout(dQ):
    return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2])


@tilelang.jit(out_idx=[1])
def post(batch=2, heads=2, seq=32, dim=16):
    @T.prim_func
    def post_mapped(dQ: T.Tensor((batch, heads, seq, dim), "float32"), out: T.Tensor((batch, heads, seq, dim), "float16")):
        with T.Kernel(T.ceildiv(seq, 16), heads, batch, threads=64) as (bx, by, bz):
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(dQ[bz, by, bx * 16:(bx + 1) * 16, :], out[bz, by, bx * 16:(bx + 1) * 16, :])
    return post_mapped


@tilelang.jit
def accum(seq=32, dim=16):
    @T.prim_func
    def accum_mapped(A: T.Tensor((seq, 16), "float16"), B: T.Tensor((dim, 16), "float16"), dQ: T.Tensor((1, 2, seq, dim), "float32")):
        with T.Kernel(2, seq // 16, threads=64) as (bx, by):
            A_s = T.alloc_shared((16, 16), "float16")
            B_s = T.alloc_shared((dim, 16), "float16")
            acc = T.alloc_fragment((16, dim), "float32")
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(A[by * 16, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, transpose_B=True)
            for i, j in T.Parallel(16, dim):
                T.atomic_add(dQ[0, bx, by * 16 + i, j], acc[i, j])
            T.atomic_add(dQ[0, 1 - bx, by * 16:(by + 1) * 16, :], acc)
    return accum_mapped


@tilelang.jit
def rescale(seq=24, dim=16):
    @T.prim_func
    def rescale_mapped(dQ: T.Tensor((1, 1, seq, dim), "float32"), R: T.Tensor((seq, dim), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((seq, dim), "float32")
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(dQ[0, 0, :, :], S)
            T.copy(S, R)
            for i, j in T.Parallel(seq, dim):
                dQ[0, 0, i, j] = S[i, dim - 1 - j] * 2 + R[i, j]
    return rescale_mapped
"#;

/// A pipelined gemm and row operations on buffers with `T.Layout` maps.
const MAPPED: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm(M=64, N=32, K=64):
    @T.prim_func
    def gemm_mapped(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 2, threads=64) as (bx, by):
            A_s = T.alloc_shared((32, 32), "float16")
            B_s = T.alloc_shared((32, 32), "float16")
            C_f = T.alloc_fragment((32, 32), "float32")
            C_s = T.alloc_shared((32, 32), "float32")
            T.annotate_layout({
                A_s: T.Layout((32, 32), lambda i, j: i * 32 + ((j // 8) ^ (i % 4)) * 8 + j % 8),
                B_s: T.Layout((32, 32), lambda i, j: j * 32 + i),
                C_s: T.Layout((32, 32), lambda i, j: i * 36 + 31 - j),
            })
            T.clear(C_f)
            for k in T.Pipelined(K // 32, num_stages=2):
                T.copy(A[by * 32, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C_s)
            T.copy(C_s, C[by * 32, 0])
    return gemm_mapped


@tilelang.jit(out_idx=[1, 2, 3])
def rows(M=16, N=32):
    @T.prim_func
    def rows_mapped(X: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), T_: T.Tensor((M,), "float32"), Z: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=64) as bx:
            Xs = T.alloc_shared((M, N), "float32")
            Zs = T.alloc_shared((M, N), "float32")
            Ss = T.alloc_shared((M,), "float32")
            Ts = T.alloc_shared((M,), "float32")
            F = T.alloc_fragment((M, N), "float32")
            G = T.alloc_fragment((M, N), "float32")
            T.annotate_layout({
                Xs: T.Layout((M, N), lambda i, j: (j ^ (i % 4)) * M + i),
                Zs: T.Layout((M, N), lambda i, j: i * N + (j + 3 * i) % N),
                Ss: T.Layout((M,), lambda i: (i * 5) % M),
                Ts: T.Layout((M,), lambda i: M - 1 - i),
            })
            T.copy(X, Xs)
            T.reduce_sum(Xs, Ss, dim=1)
            for i, j in T.Parallel(M, N):
                F[i, j] = Xs[i, j] * 0.5
            T.reduce_max(F, Ts, dim=1)
            T.cumsum(Xs, Zs, dim=1)
            T.copy(Ss, S)
            T.copy(Ts, T_)
            T.copy(Zs, G)
            T.copy(G, Z)
    return rows_mapped

@tilelang.jit(out_idx=[-1])
def slices(M=64, N=64, K=64):
    @T.prim_func
    def slices_mapped(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 2, threads=128) as (bx, by):
            S = T.alloc_shared((2, 32, 64), "float16")
            Bs = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((32, 64), "float32")
            T.annotate_layout({S: T.Layout((2, 32, 64), lambda s, i, j: (1 - s) * 2048 + i * 64 + (j ^ (i % 8 * 8)))})
            T.clear(acc)
            T.copy(A[by * 32, 0], S[0, :, :])
            T.copy(B[0, 0], Bs)
            for i, j in T.Parallel(32, 64):
                S[1, i, j] = S[0, i, j] * 2
            T.gemm(S[1, :, :], Bs, acc)
            T.copy(acc, C[by * 32, 0])
    return slices_mapped
"#;

/// A gemm whose operands and result buffer `T.annotate_layout` pins to
/// swizzles (one narrower than its rows allow), with element-wise reads
/// of the result buffer.
const ANNOTATED: &str = r#"
import tilelang
import tilelang.language as T
from tilelang.layout import make_half_bank_swizzled_layout, make_swizzled_layout


@tilelang.jit(out_idx=[-1])
def matmul(M=96, N=64, K=96, block=32, reduce=False, scan=False):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block, block), "float16")
            B_shared = T.alloc_shared((block, block), "float16")
            S = T.alloc_shared((block, block), "float32")
            R = T.alloc_shared((block,), "float32")
            C_local = T.alloc_fragment((block, block), "float32")
            T.annotate_layout({
                A_shared: make_half_bank_swizzled_layout(A_shared),
                B_shared: make_swizzled_layout(B_shared),
                S: tilelang.layout.make_quarter_bank_swizzled_layout(S),
            })
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block), num_stages=2):
                T.copy(A[by * block, ko * block], A_shared)
                T.copy(B[ko * block, bx * block], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, S)
            if reduce:
                T.reduce_max(S, R, dim=1)
                for i, j in T.Parallel(block, block):
                    C[by * block + i, bx * block + j] = S[i, j] - R[i]
            if scan:
                T.cumsum(S, dim=1)
            if not reduce:
                for i, j in T.Parallel(block, block):
                    C[by * block + i, bx * block + j] = S[i, j] * 2
    return gemm
"#;

/// Operands pinned to panels narrower than their rows (32-byte panels of a
/// 256-byte-wide `B`, 64-byte ones of a 128-byte-wide `A`) keep sm_90a's
/// shared-operand atom: its descriptors and bulk copies take the pinned
/// widths, and the results match the reference.
#[test]
fn narrow_pinned_swizzles_keep_the_shared_operand_atom() {
    let source = ANNOTATED
        .replace(
            "A_shared = T.alloc_shared((block, block), \"float16\")",
            "A_shared = T.alloc_shared((block, 2 * block), \"float16\")",
        )
        .replace(
            "B_shared = T.alloc_shared((block, block), \"float16\")",
            "B_shared = T.alloc_shared((2 * block, 4 * block), \"float16\")",
        )
        .replace(
            "make_swizzled_layout(B_shared)",
            "tilelang.layout.make_quarter_bank_swizzled_layout(B_shared)",
        )
        .replace(
            "C_local = T.alloc_fragment((block, block)",
            "C_local = T.alloc_fragment((block, 4 * block)",
        )
        .replace(
            "S = T.alloc_shared((block, block)",
            "S = T.alloc_shared((block, 4 * block)",
        )
        .replace(
            "T.ceildiv(N, block), T.ceildiv(M, block)",
            "T.ceildiv(N, 4 * block), T.ceildiv(M, block)",
        )
        .replace(
            "T.ceildiv(K, block), num_stages=2",
            "T.ceildiv(K, 2 * block), num_stages=2",
        )
        .replace("A[by * block, ko * block]", "A[by * block, ko * 2 * block]")
        .replace(
            "B[ko * block, bx * block]",
            "B[ko * 2 * block, bx * 4 * block]",
        )
        .replace("T.Parallel(block, block)", "T.Parallel(block, 4 * block)")
        .replace("bx * block + j", "bx * 4 * block + j");
    assert!(
        source.contains("(2 * block, 4 * block)")
            && source.contains("quarter_bank_swizzled_layout(B_shared)")
    );
    let call = "matmul(M=128, N=256, K=192, block=64)";
    let (module, warnings) = compile_source(&source, call);
    assert!(warnings.is_empty(), "{warnings:?}");
    let target = target::builtin("sm_90a").expect("built-in target");
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(
        text.contains("async_mma \"wgmma"),
        "no shared-operand atom:\n{text}"
    );
    assert!(
        text.contains(" k sw64 "),
        "A is not read through 64-byte panels:\n{text}"
    );
    assert!(
        text.contains(" mn sw32 "),
        "B is not read through 32-byte panels:\n{text}"
    );
    assert!(
        text.contains("sw32") && text.contains("box("),
        "B is not copied in 32-byte boxes:\n{text}"
    );
    run_and_compare(
        &module.functions[0],
        &lowered,
        &target,
        Class::Accumulation { len: 192 },
        &format!("{call} on sm_90a"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Sums over the first axis of a 3-D shared tile into a 2-D buffer pinned
/// to 128-byte panels.
const REDUCED_INTO_PINNED: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rsum(P=4, M=32, N=32):
    @T.prim_func
    def main(A: T.Tensor((P, M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((P, M, N), "float32")
            D = T.alloc_shared((M, N), "float32")
            T.annotate_layout({D: tilelang.layout.make_full_bank_swizzled_layout(D)})
            T.copy(A, S)
            T.reduce_sum(S, D, dim=0)
            T.copy(D, B)
    return main
"#;

/// `T.annotate_layout` pins are realized on every target, where no atom
/// would choose the layout too: the buffers are aligned to their swizzle
/// pattern, addresses go through the XOR, register atoms stay in use
/// (matrix loads in the XOR form where the target has them, loads per
/// lane through the layout elsewhere), and the results match the
/// reference; also when a reduction reads the pinned buffer, a scan
/// reads and writes it, or a reduction writes a pinned destination.
#[test]
fn annotated_layouts_are_realized_on_every_target() {
    for (call, name) in TARGETS.iter().map(|t| ("matmul()", *t)).chain([
        ("matmul(reduce=True)", "gfx942"),
        ("matmul(reduce=True)", "sm_80"),
        ("matmul(scan=True)", "gfx942"),
        ("matmul(scan=True)", "apple"),
    ]) {
        let (module, warnings) = compile_source(ANNOTATED, call);
        assert!(warnings.is_empty(), "{warnings:?}");
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let kernel = &lowered.kernels[0];
        for (buffer, align) in [("A_shared", 512), ("B_shared", 512), ("S", 256)] {
            let s = kernel
                .shared
                .iter()
                .find(|s| s.name == buffer)
                .unwrap_or_else(|| panic!("{name}: no shared buffer {buffer}"));
            assert_eq!(s.align, align, "{name}: {buffer} is not swizzled");
        }
        assert!(
            thread::print_module(&lowered).contains(" ^ "),
            "{name}: no address goes through the swizzle"
        );
        let stats = run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 96 },
            &format!("{call} on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        if name != "apple" {
            assert!(stats.mma > 0, "{name}: the gemm left its atoms");
        }
        if name == "sm_80" {
            assert!(stats.matrix_loads > 0, "{name}: no matrix loads");
        }
    }
    // A reduction into a pinned 2-D destination, on every target.
    let (module, warnings) = compile_source(REDUCED_INTO_PINNED, "rsum()");
    assert!(warnings.is_empty(), "{warnings:?}");
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = lowered.kernels[0].shared.iter().find(|s| s.name == "D");
        assert_eq!(d.map(|d| d.align), Some(1024), "{name}: D is not swizzled");
        run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Exact,
            &format!("rsum on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Fragments read inside `T.Parallel` with indices that are not the
/// nest's variables (a serial loop over rows of a small matrix, constant
/// rows): such a fragment is kept where every thread can read it, and the
/// kernel matches the reference on every target.
#[test]
fn fragments_read_across_threads_match_on_every_target() {
    front_file_matches_on_every_target("fragment_read_any_element", "mix", &[], Class::Exact);
}

/// Element-wise fragments too large for both the registers and the
/// shared memory (two or three (4, 8192) fragments of a row-wise layer
/// normalisation and an int8 row quantisation, 128 threads) are spread
/// over the threads in per-thread arrays as the lowering's last resort
/// (`spread.rs`, "Spilled buffers"), where before the kernel was refused
/// for its shared memory; lowered, they give the reference's results on
/// every target.
#[test]
fn fragments_too_large_for_shared_memory_spill_to_thread_arrays() {
    let class = Class::Accumulation { len: 8192 };
    front_file_matches_on_every_target(
        "fragment_spill_rows",
        "layernorm",
        &["local %a:", "local %sq:"],
        class,
    );
    front_file_matches_on_every_target(
        "fragment_spill_quant",
        "quant_rows",
        &["local %ax:", "local %q:"],
        class,
    );
}

/// `var` and `local` buffers that per-thread code stores into are kept
/// once per thread (`ir::per_thread`, `lower/private.rs`): a per-thread
/// row sum, a guarded per-thread update, and their tile-operation
/// equivalents agree with the reference on every target, the buffers are
/// local arrays, and a per-thread buffer also read by a `T.Parallel` nest
/// is refused (which thread runs which iteration is TileLang's layout
/// choice).
#[test]
fn per_thread_buffers_are_kept_per_thread_on_every_target() {
    front_file_matches_on_every_target(
        "per_thread_var",
        "per_thread",
        &["local %acc: i32[1]", "local %tmp: i32[1]"],
        Class::Exact,
    );
    let nest = "import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n    with T.Kernel(1, threads=128) as bx:\n        tx = T.get_thread_binding(0)\n        acc = T.alloc_local((1,), \"float32\")\n        acc[0] = A[tx]\n        for i in T.Parallel(128):\n            B[i] = acc[0]\n";
    let (module, _) = compile_source(nest, "k");
    let target = target::builtin("sm_80").expect("built-in target");
    let err = lower::to_thread(&module, &target).expect_err("per-thread store read by a nest");
    assert!(
        err.to_string().contains("from code that runs per thread"),
        "unexpected error: {err}"
    );
}

/// Bit casts (`T.reinterpret`) lowered on every target: in element-wise
/// `T.Parallel` code over global buffers and register fragments, between
/// f32 and i32/u32, f16 and i16, bf16 and u16 (negative integers read as
/// floats are NaNs with payloads), give the reference's bits.
#[test]
fn bit_casts_match_on_every_target() {
    let src = "import tilelang.language as T\n\
def bits(N=256):\n    \
    @T.prim_func\n    \
    def main(A: T.Tensor((N,), T.float32), I: T.Tensor((N,), T.int32), \
H: T.Tensor((N,), T.float16), S: T.Tensor((N,), T.int16), \
G: T.Tensor((N,), T.bfloat16), \
UA: T.Tensor((N,), T.uint32), IA: T.Tensor((N,), T.int32), FI: T.Tensor((N,), T.float32), \
NA: T.Tensor((N,), T.float32), SH: T.Tensor((N,), T.int16), HS: T.Tensor((N,), T.float16), \
UG: T.Tensor((N,), T.uint16), GS: T.Tensor((N,), T.bfloat16)):\n        \
        with T.Kernel(N // 128, threads=128) as bx:\n            \
            frag = T.alloc_fragment((128,), T.float32)\n            \
            T.copy(A[bx * 128], frag)\n            \
            for i in T.Parallel(128):\n                \
                UA[bx * 128 + i] = T.reinterpret(frag[i], T.uint32)\n                \
                NA[bx * 128 + i] = T.reinterpret(T.reinterpret(frag[i], T.uint32) ^ T.uint32(0x80000000), T.float32)\n            \
            for i in T.Parallel(128):\n                \
                k = bx * 128 + i\n                \
                IA[k] = T.reinterpret(A[k], T.int32) >> 20\n                \
                FI[k] = T.reinterpret(I[k] * 4096 + 0x3F800000, T.float32)\n                \
                SH[k] = T.reinterpret(H[k], T.int16)\n                \
                HS[k] = T.reinterpret(S[k] * 1111, T.float16)\n                \
                UG[k] = T.reinterpret(G[k], T.uint16)\n                \
                GS[k] = T.reinterpret(T.reinterpret(S[k], T.uint16) * T.uint16(5000), T.bfloat16)\n    \
    return main\n";
    let (module, warnings) = compile_source(src, "bits()");
    assert!(warnings.is_empty(), "{warnings:?}");
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = thread::print_module(&lowered);
        assert!(text.contains("bitcast<u32>("), "{name}: {text}");
        thread::verify_module(&lowered, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Exact,
            &format!("bit casts on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A `T.alloc_var` inside a `T.Parallel` body is a scalar of each
/// iteration, kept in the running thread's own array and set anew by each
/// iteration (`lower/private.rs`): the clamped elements match the closed
/// form and the reference on every target.
#[test]
fn allocations_inside_parallel_are_per_iteration_on_every_target() {
    front_file_matches_on_every_target(
        "alloc_in_parallel",
        "per_iteration",
        &["local %x: i32[1]"],
        Class::Exact,
    );
}

const ATOMIC_MAX_MIN: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def cells(M=64, N=16, dtype="int32"):
    @T.prim_func
    def cells_k(A: T.Tensor((M, N), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(M // 16, threads=64) as bx:
            for i, j in T.Parallel(16, N):
                T.atomic_max(B[j], A[bx * 16 + i, j])
                T.atomic_min(C[(j + 3) % N], A[bx * 16 + i, j])
    return cells_k


@tilelang.jit
def tiles(M=64, N=16):
    @T.prim_func
    def tiles_k(A: T.Tensor((M, N), "int32"), B: T.Tensor((16, N), "int32"), C: T.Tensor((16, N), "int32")):
        with T.Kernel(M // 16, threads=32) as bx:
            acc = T.alloc_fragment((16, N), "int32")
            T.copy(A[bx * 16, 0], acc)
            T.atomic_max(B[0:16, :], acc)
            T.atomic_min(C, acc)
    return tiles_k


@tilelang.jit
def per_thread(N=8):
    @T.prim_func
    def per_thread_k(A: T.Tensor((N,), "int32"), B: T.Tensor((2,), "int32")):
        with T.Kernel(N, threads=32) as bx:
            T.atomic_max(B[0], A[bx] * 3 - 7)
            T.atomic_min(B[1], A[bx] * 3 - 7)
    return per_thread_k
"#;

/// `T.atomic_max` / `T.atomic_min` from every block and thread into shared
/// cells, in the element form inside `T.Parallel`, the tile form from a
/// fragment, the thread-level form at block level, on signed, unsigned,
/// 64-bit and float destinations: the SIMT runs on every target leave the
/// memory the reference leaves, bit for bit (max and min are order-free
/// whatever the interleaving).
#[test]
fn atomic_max_and_min_lower_on_every_target() {
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        for call in [
            "cells(dtype='int32')",
            "cells(dtype='uint32')",
            "cells(dtype='int64')",
            "cells(dtype='float32')",
            "cells(dtype='float16')",
            "tiles()",
            "per_thread()",
        ] {
            let (module, warnings) = compile_source(ATOMIC_MAX_MIN, call);
            assert!(warnings.is_empty(), "{warnings:?}");
            let lowered = lower::to_thread(&module, &target)
                .unwrap_or_else(|e| panic!("{name}: {call}: {e}"));
            let text = thread::print_module(&lowered);
            assert!(
                text.contains("atomic_max ") && text.contains("atomic_min "),
                "{name}: {call}: no atomic max/min in\n{text}"
            );
            run_and_compare(
                &module.functions[0],
                &lowered,
                &target,
                Class::Exact,
                &format!("{call} on {name}"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// A `@T.prim_func` without `T.Kernel` is staged as one block of one
/// thread running the body in order (W0002); lowered, that thread runs
/// the serial and parallel loops one iteration after another, so a running
/// sum (which needs that order) and an on-chip scratch buffer give the
/// reference's results on every target.
#[test]
fn bodies_without_a_kernel_run_in_one_thread_on_every_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front");
    for (file, call) in [
        ("no_kernel_prefix_sum.py", "prefix_then_differences(N=32)"),
        ("no_kernel_tir_style.py", "round_trip"),
    ] {
        let source = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let (module, warnings) = compile_source(&source, call);
        assert!(
            warnings.len() == 1 && warnings[0].contains("one thread of a single block"),
            "{file}: {warnings:?}"
        );
        for target_name in TARGETS {
            check_example(&module, call, target_name, Class::Exact)
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|| panic!("{call}: unsupported on {target_name}"));
        }
    }
}

/// Parameters whose extent is a compound expression of the symbolic
/// sizes (`T.ceildiv(N, group)`, `M * N`) are addressed through the
/// extent's value and declared as that expression: on every target, for
/// sizes that divide evenly and sizes that leave a partial group, the
/// lowered kernel computes what the reference computes, and an argument
/// whose extent disagrees with the sizes is refused.
#[test]
fn compound_parameter_extents_lower_on_every_target() {
    let (module, _) = compile_source(COMPOUND_EXTENTS, "group_max()");
    let func = &module.functions[0];
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = thread::print_module(&lowered);
        assert!(
            text.contains("%A: global f32[%M, ((%N + 32 - 1) // 32)], %Y: global f32[(%M * %N)]"),
            "{name}: {text}"
        );
        for (m, n) in [(8, 64), (5, 100), (3, 1)] {
            let sizes = interp::SymbolValues::from([("M".to_string(), m), ("N".to_string(), n)]);
            run_and_compare_sized(
                func,
                &lowered,
                &target,
                Class::Exact,
                &format!("M = {m}, N = {n} on {name}"),
                &sizes,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        // `A` of 5 × 3 where N = 100 needs 5 × 4.
        let sizes = interp::SymbolValues::from([("M".to_string(), 5), ("N".to_string(), 100)]);
        let mut args = inputs_sized(func, 7, &sizes).expect("inputs");
        args[1] = Tensor::zeros(args[1].dtype, vec![5, 3]);
        let options = SimtOptions {
            symbols: sizes,
            ..SimtOptions::default()
        };
        let err = simt::run(&lowered.kernels[0], &target, &mut args, &options)
            .expect_err("a wrong extent is refused");
        assert!(
            err.to_string()
                .contains("has extent 3 where the sizes give 4"),
            "{name}: {err}"
        );
    }
}

/// A pipelined gemm whose `A` has a compound row count (whole tiles of
/// `M`): on sm_90a, where the same gemm over constant shapes loads its
/// tiles by tensor map, the tiles are copied without one (cp.async) and
/// the product is the reference's, for whole and partial tiles.
#[test]
fn compound_extents_are_copied_without_tensor_maps() {
    let target = target::builtin("sm_90a").expect("built-in target");
    let constant = PADDED_GEMM
        .replace("T.ceildiv(M, bm) * bm", "M")
        .replace("M = T.symbolic(\"M\")", "M = 128");
    let (module, _) = compile_source(&constant, "padded_gemm()");
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(text.contains("tensor_map %tmap_A"), "{text}");

    let (module, _) = compile_source(PADDED_GEMM, "padded_gemm()");
    let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{e}"));
    let text = thread::print_module(&lowered);
    assert!(
        !text.contains("tmap_A") && text.contains("cp_async"),
        "{text}"
    );
    for m in [128, 100] {
        let sizes = interp::SymbolValues::from([("M".to_string(), m)]);
        run_and_compare_sized(
            &module.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 64 },
            &format!("M = {m}"),
            &sizes,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `C = A @ B` with `A` and `C` padded to whole 128-row tiles of `M`
/// (`valid`, which the kernel does not read, binds `M`).
const PADDED_GEMM: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def padded_gemm(N=128, K=64, bm=128, bn=128, bk=32):
    M = T.symbolic("M")

    @T.prim_func
    def padded_gemm_kernel(
        A: T.Tensor((T.ceildiv(M, bm) * bm, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((T.ceildiv(M, bm) * bm, N), "float32"),
        valid: T.Tensor((M,), "int32"),
    ):
        with T.Kernel(T.ceildiv(M, bm), T.ceildiv(N, bn), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), "float16")
            Bs = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[bx * bm, k * bk], As)
                T.copy(B[k * bk, by * bn], Bs)
                T.gemm(As, Bs, acc)
            T.copy(acc, C[bx * bm, by * bn])
    return padded_gemm_kernel
"#;

/// An extent outside the integer language hosts evaluate (a shift) is
/// refused at the parameter, saying what to write instead.
#[test]
fn parameter_extents_outside_the_extent_language_are_refused() {
    let (module, _) = compile_source(SHIFTED_EXTENT, "halves()");
    let target = target::builtin("sm_90a").expect("built-in target");
    match lower::to_thread(&module, &target) {
        Err(e @ LowerError::Unsupported { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("parameter `B` whose extent is not an integer expression"),
                "{text}"
            );
            assert!(text.contains("symbolic size of its own"), "{text}");
            let span = e.span();
            let at = &SHIFTED_EXTENT[span.start as usize..span.end as usize];
            assert!(at.contains("N >> 1"), "{at}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// A parameter of `N >> 1` elements.
const SHIFTED_EXTENT: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def halves():
    N = T.symbolic("N")

    @T.prim_func
    def halves_kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N >> 1,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < N // 2:
                    B[bx * 64 + i] = A[bx * 64 + i]
    return halves_kernel
"#;

/// Per-group maxima of the rows of `X` (groups of 32 columns, the last
/// one partial), and `X` doubled into a flat buffer of `M * N` elements.
const COMPOUND_EXTENTS: &str = r#"
import tilelang
import tilelang.language as T


@tilelang.jit
def group_max(group=32, rows=4):
    M = T.symbolic("M")
    N = T.symbolic("N")

    @T.prim_func
    def group_max_kernel(
        X: T.Tensor((M, N), "float32"),
        A: T.Tensor((M, T.ceildiv(N, group)), "float32"),
        Y: T.Tensor((M * N,), "float32"),
    ):
        with T.Kernel(T.ceildiv(M, rows), T.ceildiv(N, group), threads=64) as (bx, by):
            tile = T.alloc_fragment((rows, group), "float32")
            top = T.alloc_fragment((rows,), "float32")
            T.copy(X[bx * rows:(bx + 1) * rows, by * group:(by + 1) * group], tile)
            T.reduce_max(tile, top, dim=1)
            for i in T.Parallel(rows):
                if bx * rows + i < M:
                    A[bx * rows + i, by] = top[i]
            for i, j in T.Parallel(rows, group):
                if bx * rows + i < M and by * group + j < N:
                    Y[(bx * rows + i) * N + by * group + j] = tile[i, j] * 2.0
    return group_max_kernel
"#;

/// `T.Kernel(..., threads=(x, y[, z]))` is one linear thread index whose
/// parts are `T.get_thread_binding(d)`: lowered, every thread computes its
/// ids and its share of a split-k sum as the reference does, on every
/// target.
#[test]
fn thread_dimensions_lower_as_parts_of_the_linear_index_on_every_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front");
    let source =
        std::fs::read_to_string(dir.join("thread_dims.py")).unwrap_or_else(|e| panic!("{e}"));
    let (module, warnings) = compile_source(&source, "thread_dims");
    assert!(warnings.is_empty(), "{warnings:?}");
    for name in TARGETS {
        let target = target::builtin(name).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        thread::verify_module(&lowered, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(lowered.kernels.len(), 4, "{name}");
        run_and_compare(
            &module.functions[0],
            &lowered,
            &target,
            Class::Exact,
            &format!("thread_dims on {name}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Reducers (`T.alloc_reducer`, both of TileLang's forms) are staged as a
/// fragment of each accumulating nest's shape, reductions and a nest that
/// combines into the reducer: lowered for every target, the front-end test
/// kernel matches the interpreter exactly (its data are integers).
#[test]
fn reducers_match_the_interpreter_on_every_target() {
    front_file_matches_on_every_target(
        "reducer_accumulate",
        "reducer_accumulate()",
        &[],
        Class::Exact,
    );
    front_file_matches_on_every_target("reducer_bitwise", "reducer_bitwise()", &[], Class::Exact);
}

/// The bitwise reductions (`reduce bitand/bitor/bitxor`, integers only)
/// fold in the 64-bit integer accumulator with the IR's bitwise operators:
/// on signed and unsigned dtypes, along the last dimension and across
/// rows, with and without `clear`, every target matches the interpreter.
#[test]
fn bitwise_reductions_match_the_interpreter_on_every_target() {
    front_file_matches_on_every_target("reduce_bitwise", "reduce_bitwise()", &[], Class::Exact);
}

/// `T.cummax` is staged as a parallel nest over rows with a serial scan
/// (in shared scratch for fragments): every target matches the
/// interpreter.
#[test]
fn cummax_matches_the_interpreter_on_every_target() {
    front_file_matches_on_every_target("cummax_scan", "cummax_scan()", &[], Class::Exact);
}

/// A fragment that only per-thread scalar code touches is kept per thread
/// like a `local` buffer: the guarded gather through a per-thread table
/// agrees with the reference on every target, and the table is a local
/// array.
#[test]
fn per_thread_fragments_are_local_arrays_on_every_target() {
    front_file_matches_on_every_target(
        "per_thread_fragment",
        "gather",
        &["local %table: i32[8]"],
        Class::Exact,
    );
}

/// A global scratch buffer beside two kernels (`T.alloc_global` at
/// function level) is a parameter of both, after the function's own; the
/// host allocates it once, so the second kernel reads what the first
/// wrote, on every target.
#[test]
fn function_scratch_buffers_are_shared_kernel_parameters() {
    front_file_matches_on_every_target(
        "alloc_global_scratch",
        "alloc_global_scratch()",
        &["%tmp: global f32[64]"],
        Class::Exact,
    );
}

/// Warp reductions (`T.warp_reduce_*`) lower to TileLang's five-step
/// `shfl_xor` butterfly over 32-lane groups (also on gfx942's 64-lane
/// wavefronts): float sums rounded after every step, `fmaxf`-style float
/// max/min, f64 compare-and-pick, 64-bit integers, in a serial loop of
/// the block's own code: bit for bit the interpreter's on every target.
#[test]
fn warp_reductions_match_the_interpreter_on_every_target() {
    front_file_matches_on_every_target(
        "warp_reduce_inputs",
        "warp_reduce_inputs()",
        &["shfl_xor"],
        Class::Exact,
    );
    front_file_matches_on_every_target("warp_reduce", "warp_reduce_kernel()", &[], Class::Exact);
}

/// Warp shuffles (`T.shfl_sync/xor/down/up`, with widths 32 and 16 and a
/// butterfly in a serial loop) are exchanged through a shared buffer
/// between two barriers: bit for bit the interpreter's on every target.
#[test]
fn warp_shuffles_match_the_interpreter_on_every_target() {
    front_file_matches_on_every_target(
        "warp_shuffle",
        "warp_shuffles()",
        &["barrier"],
        Class::Exact,
    );
    // In a loop whose count reads the thread index, the interpreter runs
    // the loop one thread after another, which the exchange's barriers
    // would reorder: it refuses rather than give another answer.
    let per_thread = "import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((32,), \"float32\")):\n    with T.Kernel(1, threads=32) as bx:\n        tx = T.get_thread_binding(0)\n        for i in T.serial(tx % 2):\n            A[tx] = T.shfl_down(A[tx], 1)\n";
    let (module, _) = compile_source(per_thread, "k");
    let func = &module.functions[0];
    let mut given = inputs_sized(func, 7, &BTreeMap::new()).expect("inputs");
    let err = interp::run(func, &mut given).expect_err("refused");
    assert!(err.to_string().contains("barrier"), "{err}");
}

/// `T.shuffle_elect` (lane 0 of each group of whole warps) and
/// `T.sync_warp` (a block barrier where the whole block reaches it) match
/// the interpreter on every target.
#[test]
fn shuffle_elect_and_sync_warp_match_on_every_target() {
    front_file_matches_on_every_target(
        "shuffle_elect",
        "shuffle_elect_kernel()",
        &[],
        Class::Exact,
    );
    front_file_matches_on_every_target("sync_warp", "sync_warp_kernel()", &[], Class::Exact);
}

/// `T.device_assert` lowers to a `trap` under the negated condition: a
/// kernel whose assertions hold matches the interpreter on every target;
/// one whose assertion fails stops with the interpreter's assertion error
/// (at the call's line) and the SIMT interpreter's trap alike.
#[test]
fn device_assertions_trap_where_they_fail() {
    front_file_matches_on_every_target(
        "device_assert",
        "device_assert_kernel()",
        &["trap"],
        Class::Exact,
    );
    let failing = "import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((64,), \"float32\"), B: T.Tensor((64,), \"float32\")):\n    with T.Kernel(1, threads=64) as bx:\n        tx = T.get_thread_binding(0)\n        T.device_assert(tx < 40)\n        B[tx] = A[tx]\n";
    let (module, _) = compile_source(failing, "k");
    let func = &module.functions[0];
    let given = inputs_sized(func, 7, &BTreeMap::new()).expect("inputs");
    let mut want = given.clone();
    let err = interp::run(func, &mut want).expect_err("the assertion fails on thread 40");
    assert!(err.to_string().contains("device_assert"), "{err}");
    for t in TARGETS {
        let target = target::builtin(t).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).expect("lowers");
        let mut got = given.clone();
        let err = simt::run(
            &lowered.kernels[0],
            &target,
            &mut got,
            &SimtOptions::default(),
        )
        .expect_err("traps");
        let text = err.to_string();
        assert!(
            text.contains("trap") && text.contains("thread 40"),
            "{t}: {text}"
        );
    }
}

/// Compiles `core/tests/front/<name>.py` with `call`, lowers it for every
/// target (checked as the examples are: verified, printed text that
/// reads back, one kernel), requires each of `arrays` in the printed
/// thread IR, and compares the SIMT run with the interpreter under `class`.
fn front_file_matches_on_every_target(name: &str, call: &str, arrays: &[&str], class: Class) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/front/{name}.py"));
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let (module, _) = compile_source(&source, call);
    let mut failures = Vec::new();
    for t in TARGETS {
        if !arrays.is_empty() {
            let target = target::builtin(t).expect("built-in target");
            match lower::to_thread(&module, &target) {
                Ok(lowered) => {
                    let printed = thread::print_module(&lowered);
                    for array in arrays.iter().filter(|a| !printed.contains(**a)) {
                        failures.push(format!("{call} on {t}: no `{array}` in\n{printed}"));
                    }
                }
                Err(e) => failures.push(format!("{call} on {t}: {e}")),
            }
        }
        match check_example(&module, call, t, class) {
            Ok(Some(_)) => {}
            Ok(None) => failures.push(format!("{call} on {t}: not supported by the lowering")),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

/// A gemm under an `if` on the thread index (a block split by hand, as
/// TileLang's hand-written warp-specialized kernels do) runs on the
/// guarded threads alone, split among their warps, with the other
/// threads busy elsewhere; on every target, with the gemm's threads first
/// or last in the block, it agrees with the reference and issues matrix
/// atoms where the target has usable ones. Branches of whole warp groups
/// are lowered as roles (`lower/split.rs`), their fragments in the
/// registers of their threads. A gemm under a range that is not whole
/// warps is refused, naming a range to write instead.
#[test]
fn a_gemm_under_a_thread_range_runs_on_those_threads() {
    for call in [
        "guard_gemm()",
        "guard_gemm(lo=128, hi=256)",
        "guard_gemm(M=32, N=64, threads=192, lo=64, hi=192)",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front/guard_gemm.py");
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let (module, warnings) = compile_source(&source, call);
        assert!(warnings.is_empty(), "{warnings:?}");
        for t in TARGETS {
            let target = target::builtin(t).expect("built-in target");
            match lower::to_thread(&module, &target) {
                Err(e) if target.named_barriers().is_none() => {
                    // The guarded threads wait for their copies at a
                    // barrier of their own, which such a target lacks.
                    assert!(e.to_string().contains("no numbered barriers"), "{t}: {e}");
                    continue;
                }
                Err(e) => panic!("{call} on {t}: {e}"),
                Ok(lowered) => {
                    // Whole warp groups are roles: the accumulator lives
                    // in the registers of the gemm's threads. The
                    // 128-of-192-thread branch keeps it in shared memory.
                    let text = thread::print_module(&lowered);
                    let groups = !call.contains("lo=64");
                    assert_eq!(
                        text.contains("local %C_f"),
                        groups,
                        "{call} on {t}:\n{text}"
                    );
                }
            }
            let stats = check_example(&module, call, t, Class::Accumulation { len: 64 })
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|| panic!("{call} unsupported on {t}"));
            if t != "apple" {
                assert!(stats.mma > 0, "{call} on {t}: no matrix atoms");
            }
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front/guard_gemm.py");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let call = "guard_gemm(lo=16, hi=144)";
    let (module, _) = compile_source(&source, call);
    let target = target::builtin("sm_80").expect("built-in target");
    match lower::to_thread(&module, &target) {
        Err(e @ LowerError::Unsupported { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("threads 16 to 143") && text.contains("whole warps"),
                "{text}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A block split by hand into a loader and a multiplier (`if tx >= 128:`
/// / `else:`) that hand stages over through phased barriers is lowered as
/// the `T.ws` kernel it means (`lower/split.rs`): on the NVIDIA targets
/// it computes what the reference computes for the kernel written with
/// roles (the reference interpreter runs an `if`'s branches one after
/// the other, which such a kernel's barriers forbid), issuing atoms from
/// the multiplier's threads, its accumulator in their registers and a
/// numbered barrier per branch. Targets without phased barriers refuse it.
/// Both branches may read a `var` that the whole block set before them
/// (its loop count), as every thread holds the same value.
#[test]
fn a_block_split_by_hand_is_lowered_as_roles() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front/split_gemm.py");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    for (call, twin) in [
        ("split_gemm()", "split_gemm_ws()"),
        (
            "split_gemm(num_stages=3, block_K=32, K=96)",
            "split_gemm_ws(num_stages=3, block_K=32, K=96)",
        ),
    ] {
        let (module, warnings) = compile_source(&source, call);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (reference, _) = compile_source(&source, twin);
        let len = if call.contains("K=96") { 96 } else { 80 };
        for t in TARGETS {
            let target = target::builtin(t).expect("built-in target");
            let lowered = match lower::to_thread(&module, &target) {
                Ok(lowered) => lowered,
                Err(e) => {
                    assert!(
                        matches!(t, "gfx942" | "apple")
                            && e.to_string().contains("no phased barriers"),
                        "{call} on {t}: {e}"
                    );
                    continue;
                }
            };
            thread::verify_module(&lowered, &target).unwrap_or_else(|e| panic!("{t}: {e}"));
            let text = thread::print_module(&lowered);
            assert!(text.contains("local %C_local"), "{call} on {t}:\n{text}");
            let what = format!("{call} on {t}");
            let stats = run_and_compare(
                &reference.functions[0],
                &lowered,
                &target,
                Class::Accumulation { len },
                &what,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            assert!(stats.mma > 0, "{what}: no matrix atoms");
        }
    }
    // The step count in a `var` set by the whole block, read by both
    // branches: still roles (each branch's `if` keeps one warp group, the
    // accumulator in registers: the stage index `k % 2` is in bounds
    // whatever the count), and the same results as the kernel with roles.
    let counted = source
        .replace(
            "            consumed = T.alloc_barrier([128] * num_stages)\n",
            "            consumed = T.alloc_barrier([128] * num_stages)\n            steps = T.alloc_var(\"int32\")\n            steps = T.ceildiv(K, block_K)\n",
        )
        .replace("T.serial(T.ceildiv(K, block_K))", "T.serial(steps)");
    assert_eq!(counted.matches("T.serial(steps)").count(), 4);
    let (module, _) = compile_source(&counted, "split_gemm()");
    let (reference, _) = compile_source(&counted, "split_gemm_ws()");
    for t in ["sm_80", "sm_90a"] {
        let target = target::builtin(t).expect("built-in target");
        let lowered = lower::to_thread(&module, &target).unwrap_or_else(|e| panic!("{t}: {e}"));
        let text = thread::print_module(&lowered);
        assert!(
            text.contains("if thread_idx >= 128 && thread_idx < 256 {")
                && text.contains("if thread_idx < 128 {")
                && text.contains("local %C_local"),
            "{t}:\n{text}"
        );
        let what = format!("split_gemm() counting in a var on {t}");
        run_and_compare(
            &reference.functions[0],
            &lowered,
            &target,
            Class::Accumulation { len: 80 },
            &what,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A barrier of count 1 that only thread 0 arrives at: the lowered kernel
/// and the reference interpreter both complete one phase, so the wait
/// passes and the copy through shared memory is whole, on the targets with
/// phased barriers; the others refuse the barrier.
#[test]
fn guarded_single_thread_arrive_completes_a_count_one_barrier() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front/guarded_arrive.py");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let (module, _) = compile_source(&source, "guarded_arrive");
    for t in ["sm_80", "sm_90a"] {
        check_example(&module, "guarded_arrive", t, Class::Exact)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("guarded_arrive unsupported on {t}"));
    }
    for t in ["gfx942", "apple"] {
        let target = target::builtin(t).unwrap_or_else(|e| panic!("{e}"));
        match lower::to_thread(&module, &target) {
            Err(e @ LowerError::Unsupported { .. }) => {
                assert!(e.to_string().contains("no phased barriers"), "{t}: {e}");
            }
            other => panic!("{t}: expected a refusal, got {other:?}"),
        }
    }
}

/// A block loop holding a parallel copy into shared memory and per-thread
/// code that reads a neighbour's element of it: lowered, each iteration's
/// copy completes before the threads read, as in the reference.
#[test]
fn loops_with_tile_and_per_thread_code_match_on_every_target() {
    front_file_matches_on_every_target(
        "loop_tile_and_thread_code",
        "loop_tile_and_thread_code",
        &[],
        Class::Exact,
    );
}

/// A fragment written by a parallel nest under a thread guard and copied
/// out by the whole block: lowered, every element reaches the output, as
/// in the reference, on every target.
#[test]
fn fragments_written_by_a_guarded_nest_match_on_every_target() {
    front_file_matches_on_every_target(
        "guarded_fragment_nest",
        "guarded_fragment_nest",
        &[],
        Class::Exact,
    );
}
