//! Self-test of the corpus against tilec's own front end and reference
//! interpreter: every grid loads into well-formed cases; every positive case
//! compiles without errors and runs twice on the interpreter from inputs
//! seeded by its id, with bit-identical results unless it is marked
//! nondeterministic; every negative case is refused as it says.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tilec_conformance::corpus::{self, Case};
use tilec_core::front::py::{CallArg, KernelCall, Options, compile};
use tilec_core::interp::{self, Tensor, TensorData};
use tilec_core::ir::{DTypeKind, Function, Module, verify::verify_module};

/// SplitMix64 (Steele, Lea and Flood), the input generator of the test.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One tensor per parameter: floats uniform in [-2, 2) rounded to the
/// dtype, signed integers in [-8, 8], unsigned in [0, 16), bools 0/1.
fn inputs(func: &Function, seed: u64) -> Vec<Tensor> {
    let shapes = interp::param_shapes(func, &BTreeMap::new())
        .unwrap_or_else(|e| panic!("{}: parameter shapes: {e}", func.name));
    let mut rng = SplitMix64(seed);
    func.params
        .iter()
        .zip(shapes)
        .map(|(param, shape)| {
            let dtype = func.buffers[param.buffer].dtype;
            let len: usize = shape.iter().product();
            let data = match dtype.kind() {
                DTypeKind::Float => TensorData::Float(
                    (0..len)
                        .map(|_| dtype.round_f64(rng.unit() * 4.0 - 2.0))
                        .collect(),
                ),
                DTypeKind::Signed => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 17) as i64 - 8).collect())
                }
                DTypeKind::Unsigned => {
                    TensorData::Int((0..len).map(|_| (rng.next() % 16) as i64).collect())
                }
                DTypeKind::Bool => {
                    TensorData::Int((0..len).map(|_| (rng.next() & 1) as i64).collect())
                }
            };
            Tensor { dtype, shape, data }
        })
        .collect()
}

/// Bit patterns of every element, so that NaN compares equal to itself and
/// -0.0 differs from +0.0.
fn bits(tensors: &[Tensor]) -> Vec<Vec<u64>> {
    tensors
        .iter()
        .map(|t| match &t.data {
            TensorData::Float(v) => v.iter().map(|x| x.to_bits()).collect(),
            TensorData::Int(v) => v.iter().map(|&x| x as u64).collect(),
        })
        .collect()
}

fn compile_case(case: &Case) -> Result<(Module, Option<KernelCall>), String> {
    let source = std::fs::read_to_string(&case.file)
        .unwrap_or_else(|e| panic!("{}: cannot read {}: {e}", case.id, case.file.display()));
    let options = Options {
        kernel: case.kernel.clone(),
        defines: case.defines.clone(),
        target: None,
    };
    let out = compile(&source, &options);
    if out.has_errors() {
        let codes: Vec<String> = out
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}: {}", d.code, d.message))
            .collect();
        return Err(codes.join("; "));
    }
    match out.module {
        Some(module) => Ok((module, out.call)),
        None => Err("no module and no error".into()),
    }
}

fn error_codes(case: &Case) -> Vec<&'static str> {
    let source = std::fs::read_to_string(&case.file).expect("the kernel file is readable");
    let options = Options {
        kernel: case.kernel.clone(),
        defines: case.defines.clone(),
        target: None,
    };
    compile(&source, &options)
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

fn run_positive(case: &Case) -> Result<(), String> {
    let (module, call) = compile_case(case)?;
    let [func] = module.functions.as_slice() else {
        return Err(format!(
            "{} functions, expected one",
            module.functions.len()
        ));
    };
    let first_inputs = inputs(func, case.seed);
    let mut first = first_inputs.clone();
    interp::run(func, &mut first).map_err(|e| format!("run 1: {e}"))?;
    if first == first_inputs && !func.params.is_empty() {
        return Err("the kernel wrote nothing".into());
    }
    let mut second = inputs(func, case.seed);
    interp::run(func, &mut second).map_err(|e| format!("run 2: {e}"))?;
    if !case.nondeterministic && bits(&first) != bits(&second) {
        return Err("two runs differ".into());
    }
    match call {
        Some(call) => sanity(&case.family, &call, &first_inputs, &first),
        None => Ok(()),
    }
}

fn check_negative(case: &Case, expected: &str) -> Result<(), String> {
    let is_tir = case.file.extension().is_some_and(|e| e == "tir");
    if is_tir {
        if expected != "InvalidIr" {
            return Err(format!("a .tir case must expect InvalidIr, not {expected}"));
        }
        let text = std::fs::read_to_string(&case.file).expect("the kernel file is readable");
        return match tilec_core::text::parse_module(&text) {
            Err(_) => Ok(()),
            Ok(module) => match verify_module(&module) {
                Err(_) => Ok(()),
                Ok(()) => Err("the IR parsed and verified".into()),
            },
        };
    }
    let front_code = expected.len() == 5
        && expected.starts_with(['T', 'W', 'P'])
        && expected[1..].bytes().all(|b| b.is_ascii_digit());
    if front_code {
        let codes = error_codes(case);
        if codes.contains(&expected) {
            Ok(())
        } else {
            Err(format!("expected {expected}, got {codes:?}"))
        }
    } else {
        // Refused by a target: valid for the front end and the verifier.
        let (module, _) = compile_case(case)?;
        verify_module(&module).map_err(|e| format!("verify: {e:?}"))
    }
}

#[test]
// The case count and the slowest cases are printed for `--nocapture` runs.
#[allow(clippy::print_stderr)]
fn corpus_loads_compiles_and_runs_deterministically() {
    let start = Instant::now();
    let cases = corpus::load(&corpus::corpus_dir()).expect("the corpus loads");
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    for pair in cases.windows(2) {
        assert!(pair[0].id < pair[1].id, "ids not sorted and unique");
    }
    for case in &cases {
        assert!(corpus::is_valid_id(&case.id), "bad id {}", case.id);
        assert!(
            case.id
                .starts_with(&format!("tilec.{}.{}.", case.level.id(), case.family))
        );
        assert_eq!(case.seed, corpus::seed_for(&case.id));
    }

    let mut failures = Vec::new();
    let mut slowest: Vec<(Duration, &str)> = Vec::new();
    let mut per_family: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        *per_family.entry(case.family.as_str()).or_default() += 1;
        let t = Instant::now();
        let result = match &case.expect_error {
            Some(expected) => check_negative(case, expected),
            None => run_positive(case),
        };
        slowest.push((t.elapsed(), &case.id));
        if let Err(message) = result {
            failures.push(format!("{} (seed {:#018x}): {message}", case.id, case.seed));
        }
    }
    slowest.sort_by_key(|&(d, _)| std::cmp::Reverse(d));
    eprintln!(
        "{} cases in {:.2?}: {per_family:?}",
        cases.len(),
        start.elapsed()
    );
    for (d, id) in slowest.iter().take(5) {
        eprintln!("  {d:.2?} {id}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn seeds_are_stable() {
    // Pinned: the seed of a test id must never change between versions.
    assert_eq!(corpus::seed_for("tilec.l2.gemm.nt.f16_f32.m257n129k77"), {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in "tilec.l2.gemm.nt.f16_f32.m257n129k77".bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    });
}

/// Element values as `f64` (integers converted).
fn values(t: &Tensor) -> Vec<f64> {
    match &t.data {
        TensorData::Float(v) => v.clone(),
        TensorData::Int(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

fn arg_int(call: &KernelCall, name: &str) -> usize {
    match call.arg(name) {
        Some(CallArg::Int(v)) => usize::try_from(*v).expect("a size"),
        other => panic!("{}: `{name}` is {other:?}", call.builder),
    }
}

fn arg_bool(call: &KernelCall, name: &str) -> bool {
    matches!(call.arg(name), Some(CallArg::Bool(true)))
}

fn arg_str<'a>(call: &'a KernelCall, name: &str) -> &'a str {
    match call.arg(name) {
        Some(CallArg::Str(s)) => s,
        other => panic!("{}: `{name}` is {other:?}", call.builder),
    }
}

/// `op(A) @ op(B)` in f64, row-major (M, N).
fn matmul_f64(a: &[f64], b: &[f64], dims: (usize, usize, usize), ta: bool, tb: bool) -> Vec<f64> {
    let (m, n, k) = dims;
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|p| {
                    let x = if ta { a[p * m + i] } else { a[i * k + p] };
                    let y = if tb { b[j * k + p] } else { b[p * n + j] };
                    x * y
                })
                .sum();
        }
    }
    c
}

fn close(got: &[f64], want: &[f64], tol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, expected {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // NaN on either side fails too.
        let within = (g - w).abs() <= tol * (1.0 + w.abs());
        if !within {
            return Err(format!("element {i}: {g}, expected about {w}"));
        }
    }
    Ok(())
}

/// Checks that a kernel computes what its family says, loosely (the
/// conformance runner compares backends with the interpreter; this only
/// guards the corpus against kernels that compute the wrong thing).
fn sanity(
    family: &str,
    call: &KernelCall,
    inputs: &[Tensor],
    outputs: &[Tensor],
) -> Result<(), String> {
    let out = values(&outputs[outputs.len() - 1]);
    match family {
        "gemm" | "gemm_fragment_operand" | "gemm_staged" => {
            let dims = (arg_int(call, "M"), arg_int(call, "N"), arg_int(call, "K"));
            let ta = family == "gemm" && arg_bool(call, "trans_A");
            let want = matmul_f64(
                &values(&inputs[0]),
                &values(&inputs[1]),
                dims,
                ta,
                arg_bool(call, "trans_B"),
            );
            close(&out, &want, 1e-4)
        }
        "gemm_ws" => {
            let (m, n, k) = (arg_int(call, "M"), arg_int(call, "N"), arg_int(call, "K"));
            let mut want = matmul_f64(
                &values(&inputs[0]),
                &values(&inputs[1]),
                (m, n, k),
                false,
                false,
            );
            if arg_bool(call, "row_max") {
                // Each block subtracts the maximum of its row of the
                // 64-column tile, the columns past N counting as zeros.
                let block_n = 64;
                for i in 0..m {
                    for t in (0..n).step_by(block_n) {
                        let cols = t..(t + block_n).min(n);
                        let mut peak = want[i * n + t];
                        for j in cols.clone() {
                            peak = peak.max(want[i * n + j]);
                        }
                        if t + block_n > n {
                            peak = peak.max(0.0);
                        }
                        for j in cols {
                            want[i * n + j] -= peak;
                        }
                    }
                }
            }
            close(&out, &want, 1e-4)
        }
        "gemm_layouts" => {
            let dims = (arg_int(call, "M"), arg_int(call, "N"), arg_int(call, "K"));
            let product = matmul_f64(&values(&inputs[0]), &values(&inputs[1]), dims, false, true);
            let want: Vec<f64> = product.iter().map(|p| 2.0 * p).collect();
            close(&out, &want, 1e-4)
        }
        "gemm_splitk" => {
            let dims = (arg_int(call, "M"), arg_int(call, "N"), arg_int(call, "K"));
            let product = matmul_f64(&values(&inputs[0]), &values(&inputs[1]), dims, false, false);
            let want: Vec<f64> = values(&inputs[2])
                .iter()
                .zip(&product)
                .map(|(c, p)| c + p)
                .collect();
            close(&out, &want, 1e-4)
        }
        "oob_tiles" => {
            let (m, n) = (arg_int(call, "M"), arg_int(call, "N"));
            let half = arg_int(call, "block") / 2;
            let x = values(&inputs[0]);
            let want: Vec<f64> = match arg_str(call, "mode") {
                "fill" => x.iter().map(|v| v + 7.0).collect(),
                "shift" => {
                    let block = arg_int(call, "block");
                    (0..m * n)
                        .map(|idx| {
                            let (i, j) = (idx / n, idx % n);
                            // Tile origins, then the source offset of half a tile.
                            let (si, sj) = (
                                i / block * block + half + i % block,
                                j / block * block + half + j % block,
                            );
                            if si < m && sj < n {
                                x[si * n + sj]
                            } else {
                                0.0
                            }
                        })
                        .collect()
                }
                _ => x,
            };
            close(&out, &want, 1e-3)
        }
        "copy_cast" => {
            let (src, dst) = (inputs[0].dtype, outputs[1].dtype);
            let x = values(&inputs[0]);
            let want: Vec<f64> = if dst.is_float() {
                x.iter().map(|&v| dst.round_f64(v)).collect()
            } else if src.is_int() {
                x.iter().map(|&v| dst.wrap_i64(v as i64) as f64).collect()
            } else {
                return Ok(()); // float -> int: rounding mode is the tolerance policy's business
            };
            close(&out, &want, 0.0)
        }
        "softmax" => {
            let n = arg_int(call, "N");
            for (r, row) in out.chunks(n).enumerate() {
                let sum: f64 = row.iter().sum();
                if (sum - 1.0).abs() > 0.05 {
                    return Err(format!("row {r} sums to {sum}"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
