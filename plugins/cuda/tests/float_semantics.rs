//! Float semantics of the emitted PTX, checked on an NVIDIA GPU against
//! what the reference interpreter defines.
//!
//! Some operators are emitted as single hardware instructions whose exact
//! behaviour the PTX ISA states only in prose: `exp2` of `f32` as
//! `ex2.approx.f32` (no flush to zero), and `min`/`max` of `f32` as
//! `min.NaN.f32`/`max.NaN.f32`. This test runs them on the device:
//!
//! - `min`/`max` on every pair of a set of special values (signed zeros,
//!   infinities, NaNs with several payloads, subnormals, extremes) must
//!   equal the SIMT interpreter's result bit for bit (any NaN for NaN);
//! - `atomic_max`/`atomic_min` of `f32` (a compare-and-swap loop) on every
//!   pair of the same values, the element starting at the first, must
//!   equal the SIMT interpreter's result bit for bit (any NaN for NaN);
//! - `exp2` on about 35 million `f32` inputs — every input whose result is
//!   subnormal or near the subnormal boundary (`[-152, -120]`), every
//!   input in `[1, 2)` (so every fraction at that spacing), a dense stride
//!   through all other inputs with a finite non-zero result, and the
//!   specials — must be within the conformance bound for `exp2`, 3 ulps
//!   of the exact result (`docs/conformance.md`), measured against
//!   `f64::exp2`. It prints the largest error found (2.38 ulps on an
//!   H200, at a subnormal result; 2.06 on normal ones).
//!
//! Without a device the test passes vacuously (it says so), unless
//! `TILEC_REQUIRE_GPU` is set.

use tilec_backend_cuda::targets;
use tilec_core::interp::Tensor;
use tilec_core::ir::DType;
use tilec_core::simt::{self, SimtOptions};
use tilec_core::thread;

mod common;
use common::{alloc, device_or_skip, download, emit, free, launch, upload};

const ARCH: &str = "sm_90a";
const THREADS: usize = 256;
/// The conformance bound for `exp2` of `f32` (`elementwise_ulps("exp2")`
/// in `conformance/src/tolerance.rs`): the largest error against the exact
/// result, in ulps.
const EXP2_ULPS: f64 = 3.0;

/// A kernel applying `body` (one or more statements over `%x`, `%y`, `%r`
/// storing into the outputs) element-wise to `n` elements.
fn elementwise_ir(outputs: &[&str], body: &str, n: usize) -> String {
    let outs: String = outputs
        .iter()
        .map(|o| format!(", %{o}: global f32[{n}]"))
        .collect();
    format!(
        "thread_ir 0.1\n\n\
kernel @floats(%X: global f32[{n}], %Y: global f32[{n}]{outs}) grid({g}, 1, 1) threads({THREADS}) {{\n\
  local %x: f32[1]\n  local %y: f32[1]\n  local %r: f32[1]\n  var %i: i32\n\
  %i = block_idx_x * {THREADS} + thread_idx\n\
  load global x1 %x[0] <- %X[%i]\n  load global x1 %y[0] <- %Y[%i]\n\
{body}}}\n",
        g = n / THREADS
    )
}

fn bytes_of(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn floats_of(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Runs `text` on the device with inputs `x`, `y` and `outputs` result
/// buffers; returns the results.
fn run_device(text: &str, x: &[f32], y: &[f32], outputs: usize) -> Vec<Vec<f32>> {
    let bytes = x.len() * 4;
    let (bx, by) = (alloc(bytes), alloc(bytes));
    upload(bx, bytes_of(x));
    upload(by, bytes_of(y));
    let outs: Vec<u64> = (0..outputs).map(|_| alloc(bytes)).collect();
    let mut args = vec![bx, by];
    args.extend(&outs);
    launch(text, ARCH, (x.len() / THREADS) as u32, args);
    let results = outs
        .iter()
        .map(|&o| floats_of(&download(o, bytes)))
        .collect();
    for b in [bx, by].into_iter().chain(outs) {
        free(b);
    }
    results
}

/// Values at the edges of `f32`'s semantics.
fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7FC0_0000),
        f32::from_bits(0xFFC0_0000),
        f32::from_bits(0x7FFF_FFFF),
        f32::from_bits(0x7F80_0001),
        f32::from_bits(0xFFA0_0000),
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007F_FFFF),
        f32::from_bits(0x807F_FFFF),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        1.5,
        -1.5,
        3.0e-30,
        -7.25e12,
    ];
    v.extend([f32::EPSILON, 1.0 + f32::EPSILON, -(1.0 + f32::EPSILON)]);
    v
}

/// `min` and `max` of every pair of [`specials`], against the SIMT
/// interpreter (the reference's semantics: NaN propagates, `−0 < +0`).
fn check_min_max(device: &str) {
    let s = specials();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for &a in &s {
        for &b in &s {
            x.push(a);
            y.push(b);
        }
    }
    let n = x.len().div_ceil(THREADS) * THREADS;
    x.resize(n, 0.0);
    y.resize(n, 0.0);
    let body = "  %r[0] = max(%x[0], %y[0])\n  store global x1 %MX[%i] <- %r[0]\n\
  %r[0] = min(%x[0], %y[0])\n  store global x1 %MN[%i] <- %r[0]\n";
    let text = elementwise_ir(&["MX", "MN"], body, n);
    let (_, emitted) = emit(&text, ARCH);
    let got = run_device(&text, &x, &y, 2);

    let module = thread::parse_module(&text).unwrap_or_else(|e| panic!("{e}"));
    let target = targets::describe(ARCH).unwrap_or_else(|e| panic!("{}", e.message));
    let to_f64 = |v: &[f32]| v.iter().map(|&f| f64::from(f)).collect::<Vec<_>>();
    let mut args = vec![
        Tensor::from_f64(DType::F32, vec![n], to_f64(&x)).unwrap_or_else(|e| panic!("{e}")),
        Tensor::from_f64(DType::F32, vec![n], to_f64(&y)).unwrap_or_else(|e| panic!("{e}")),
        Tensor::zeros(DType::F32, vec![n]),
        Tensor::zeros(DType::F32, vec![n]),
    ];
    simt::run(
        &module.kernels[0],
        &target,
        &mut args,
        &SimtOptions::default(),
    )
    .unwrap_or_else(|e| panic!("SIMT: {e}"));
    let mut wrong = Vec::new();
    for (o, name) in [(0, "max"), (1, "min")] {
        let want = floats_of(&args[2 + o].to_le_bytes());
        for i in 0..s.len() * s.len() {
            let (g, w) = (got[o][i], want[i]);
            let same = if w.is_nan() {
                g.is_nan()
            } else {
                g.to_bits() == w.to_bits()
            };
            if !same {
                wrong.push(format!(
                    "{name}({:#010x}, {:#010x}) = {:#010x}, reference {:#010x}",
                    x[i].to_bits(),
                    y[i].to_bits(),
                    g.to_bits(),
                    w.to_bits()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} min/max results differ from the reference on {device}; first: {}\nPTX:\n{}",
        wrong.len(),
        2 * s.len() * s.len(),
        wrong.first().map_or("", String::as_str),
        emitted.text
    );
}

/// `atomic_max`/`atomic_min` of `f32` (a compare-and-swap loop) on every
/// pair of [`specials`]: the element starts at `x`, the value is `y`; the
/// result must equal the SIMT interpreter's bit for bit (a NaN value never
/// replaces, a NaN element stays, signed zeros do not replace each other).
fn check_atomic_min_max(device: &str) {
    let s = specials();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for &a in &s {
        for &b in &s {
            x.push(a);
            y.push(b);
        }
    }
    let n = x.len().div_ceil(THREADS) * THREADS;
    x.resize(n, 0.0);
    y.resize(n, 0.0);
    let body = "  store global x1 %MX[%i] <- %x[0]\n  store global x1 %MN[%i] <- %x[0]\n\
  atomic_max %MX[%i], %y[0]\n  atomic_min %MN[%i], %y[0]\n";
    let text = elementwise_ir(&["MX", "MN"], body, n);
    let (_, emitted) = emit(&text, ARCH);
    let got = run_device(&text, &x, &y, 2);
    let module = thread::parse_module(&text).unwrap_or_else(|e| panic!("{e}"));
    let target = targets::describe(ARCH).unwrap_or_else(|e| panic!("{}", e.message));
    let to_f64 = |v: &[f32]| v.iter().map(|&f| f64::from(f)).collect::<Vec<_>>();
    let mut args = vec![
        Tensor::from_f64(DType::F32, vec![n], to_f64(&x)).unwrap_or_else(|e| panic!("{e}")),
        Tensor::from_f64(DType::F32, vec![n], to_f64(&y)).unwrap_or_else(|e| panic!("{e}")),
        Tensor::zeros(DType::F32, vec![n]),
        Tensor::zeros(DType::F32, vec![n]),
    ];
    simt::run(
        &module.kernels[0],
        &target,
        &mut args,
        &SimtOptions::default(),
    )
    .unwrap_or_else(|e| panic!("SIMT: {e}"));
    let mut wrong = Vec::new();
    for (o, name) in [(0, "atomic_max"), (1, "atomic_min")] {
        let want = floats_of(&args[2 + o].to_le_bytes());
        for i in 0..s.len() * s.len() {
            let (g, w) = (got[o][i], want[i]);
            let same = if w.is_nan() {
                g.is_nan()
            } else {
                g.to_bits() == w.to_bits()
            };
            if !same {
                wrong.push(format!(
                    "{name}({:#010x}, {:#010x}) = {:#010x}, reference {:#010x}",
                    x[i].to_bits(),
                    y[i].to_bits(),
                    g.to_bits(),
                    w.to_bits()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} atomic min/max results differ from the reference on {device}; first: {}\nPTX:\n{}",
        wrong.len(),
        2 * s.len() * s.len(),
        wrong.first().map_or("", String::as_str),
        emitted.text
    );
}

/// The spacing of `f32` at magnitude `e` (subnormal spacing below the
/// normal range).
fn ulp_at(e: f64) -> f64 {
    let exponent = if e == 0.0 {
        -126
    } else {
        (e.abs().log2().floor() as i32).max(-126)
    };
    (f64::from(exponent - 23)).exp2()
}

/// The inputs of the `exp2` check (see the module comment).
fn exp2_inputs() -> Vec<f32> {
    let mut v = specials();
    v.extend([128.0, 127.999_99, -149.0, -150.0, -151.0, -126.0, -125.5]);
    // Every input whose result is subnormal or within a few binades of the
    // normal range: x in [-152, -120].
    let lo = (-120.0f32).to_bits();
    let hi = (-152.0f32).to_bits();
    v.extend((lo..=hi).map(f32::from_bits));
    // Every input in [1, 2): the error depends mostly on the fraction.
    v.extend((1.0f32.to_bits()..2.0f32.to_bits()).map(f32::from_bits));
    // A dense stride through the inputs with finite non-zero results.
    v.extend((0..(128.0f32).to_bits()).step_by(97).map(f32::from_bits));
    v.extend(((-0.0f32).to_bits()..lo).step_by(89).map(f32::from_bits));
    let n = v.len().div_ceil(THREADS) * THREADS;
    v.resize(n, 0.0);
    v
}

fn check_exp2(device: &str) {
    let x = exp2_inputs();
    let body = "  %r[0] = exp2(%x[0])\n  store global x1 %E[%i] <- %r[0]\n";
    let text = elementwise_ir(&["E"], body, x.len());
    let (_, emitted) = emit(&text, ARCH);
    assert!(
        emitted.text.contains("ex2.approx.f32") && !emitted.text.contains("ex2.approx.ftz"),
        "exp2 of f32 is expected as ex2.approx.f32 without flush to zero:\n{}",
        emitted.text
    );
    let got = run_device(&text, &x, &x, 1).remove(0);
    let mut worst = (0.0f64, 0.0f32);
    let mut wrong = Vec::new();
    for (&xi, &g) in x.iter().zip(&got) {
        let exact = f64::from(xi).exp2();
        let err = if xi.is_nan() {
            if g.is_nan() { 0.0 } else { f64::INFINITY }
        } else if g.is_infinite() && exact >= f64::from(f32::MAX) {
            0.0
        } else {
            (f64::from(g) - exact).abs() / ulp_at(exact)
        };
        if err > worst.0 {
            worst = (err, xi);
        }
        if err > EXP2_ULPS && wrong.len() < 10 {
            wrong.push(format!(
                "exp2({xi:e} = {:#010x}) = {g:e}, exact {exact:e}: {err:.3} ulp",
                xi.to_bits()
            ));
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!(
            "exp2 on {device}: {} inputs, largest error {:.3} ulp at x = {:e}",
            x.len(),
            worst.0,
            worst.1
        );
    }
    assert!(
        wrong.is_empty(),
        "exp2 beyond {EXP2_ULPS} ulps on {device}:\n{}",
        wrong.join("\n")
    );
}

/// The kernels are valid thread IR and emit PTX, GPU or not.
#[test]
fn float_kernels_emit() {
    let (_, emitted) = emit(
        &elementwise_ir(
            &["E"],
            "  %r[0] = exp2(%x[0])\n  store global x1 %E[%i] <- %r[0]\n",
            256,
        ),
        ARCH,
    );
    assert!(emitted.text.contains("ex2.approx.f32"));
    let (_, emitted) = emit(
        &elementwise_ir(
            &["MX"],
            "  %r[0] = max(%x[0], %y[0])\n  store global x1 %MX[%i] <- %r[0]\n",
            256,
        ),
        ARCH,
    );
    assert!(emitted.text.contains("max.NaN.f32"));
}

#[test]
fn exp2_and_min_max_match_the_reference_on_the_gpu() {
    let Some(device) = device_or_skip() else {
        return;
    };
    check_min_max(&device);
    check_atomic_min_max(&device);
    check_exp2(&device);
}

#[test]
fn ulp_spacing() {
    assert_eq!(ulp_at(1.0), f64::from(f32::EPSILON));
    assert_eq!(ulp_at(1.5), f64::from(f32::EPSILON));
    assert_eq!(ulp_at(0.0), (-149f64).exp2());
    assert_eq!(ulp_at(1e-40), (-149f64).exp2());
    assert_eq!(ulp_at(f64::from(f32::MIN_POSITIVE)), (-149f64).exp2());
}
