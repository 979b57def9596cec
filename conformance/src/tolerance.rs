//! The tolerance policy: how close a backend's output must be to the
//! reference interpreter's, by the class of operation that produced it.
//!
//! Implemented once here and described (with its reasoning) in
//! `docs/conformance.md`:
//!
//! - [`OpClass::BitExact`]: identical bit patterns after rounding to the
//!   dtype; `+0` and `-0` are *different* (data movement must preserve the
//!   sign of zero); any NaN matches any NaN (the interpreter's `f64` storage
//!   does not keep payloads).
//! - [`OpClass::Elementwise`]: a ULP bound against the reference, see
//!   [`ulp_distance`], [`elementwise_ulps`] and [`ulps_within`].
//! - [`OpClass::Accumulation`]: an error bound growing with the reduction
//!   length and the accumulator's unit roundoff, see [`accumulation_bound`]
//!   and [`compare_accumulation`].
//!
//! In every class NaN matches only NaN and an infinity only the same
//! infinity.

use serde::{Deserialize, Serialize};
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;

/// How close an output must be to the reference, by the class of operation
/// that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OpClass {
    /// Data movement, layout changes, integer arithmetic: bit for bit.
    BitExact,
    /// Element-wise math: within `ulps` units in the last place of the
    /// output type against a float64 reference (`fast_math_ulps` when the
    /// kernel allows approximations).
    Elementwise { ulps: u32, fast_math_ulps: u32 },
    /// Reductions, GEMM, softmax, attention: an error bound growing with the
    /// reduction length and the accumulator's unit roundoff, plus the output
    /// type's rounding.
    Accumulation {
        reduction_len: u64,
        accumulator: DType,
        /// The reduction's terms are products of values rounded to this
        /// type after a computation backends may carry out differently
        /// (attention's probabilities, cast to f16 after an exponential and
        /// a tensor-core accumulation): each term may be off by one rounding
        /// of it, which adds `u·Σ|terms|` to the bound.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rounded_terms: Option<DType>,
    },
}

impl OpClass {
    /// The element-wise class for a named operator, from [`elementwise_ulps`].
    pub fn elementwise(op: &str) -> OpClass {
        let (ulps, fast_math_ulps) = elementwise_ulps(op);
        OpClass::Elementwise {
            ulps,
            fast_math_ulps,
        }
    }
}

/// Why two tensors could not be compared at all (a suite bug or a backend
/// returning the wrong shape or type; the runner reports the latter as a
/// `Fail`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ToleranceError {
    #[error("shape mismatch: actual {actual:?}, expected {expected:?}")]
    ShapeMismatch {
        actual: Vec<usize>,
        expected: Vec<usize>,
    },
    #[error("dtype mismatch: actual {actual}, expected {expected}")]
    DTypeMismatch { actual: DType, expected: DType },
    #[error("magnitude tensor has shape {found:?}, outputs have {expected:?}")]
    MagnitudeShape {
        found: Vec<usize>,
        expected: Vec<usize>,
    },
    #[error("malformed {which} tensor: {detail}")]
    BadTensor { which: &'static str, detail: String },
}

/// How many mismatching elements [`Comparison::first_mismatches`] keeps.
pub const MAX_REPORTED_MISMATCHES: usize = 8;

/// The outcome of comparing an output tensor with the reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Number of elements compared.
    pub elements: usize,
    /// Number of elements outside the tolerance.
    pub mismatches: usize,
    /// Largest `|actual - expected|` over elements where both are finite.
    pub max_abs_err: f64,
    /// Largest [`ulp_distance`] over all elements (infinite when a special
    /// value does not match).
    pub max_ulp_err: f64,
    /// The first [`MAX_REPORTED_MISMATCHES`] mismatches as
    /// `(flat index, actual, expected)`.
    pub first_mismatches: Vec<(usize, f64, f64)>,
}

impl Comparison {
    /// Whether every element is within tolerance.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }

    /// A one-line description for test records and terminal reports.
    pub fn message(&self) -> String {
        let mut s = format!(
            "{}/{} elements outside tolerance (max abs err {:e}, max ulp err {})",
            self.mismatches, self.elements, self.max_abs_err, self.max_ulp_err
        );
        if let Some((i, a, e)) = self.first_mismatches.first() {
            s.push_str(&format!("; first at [{i}]: got {a:e}, expected {e:e}"));
        }
        s
    }

    fn new(elements: usize) -> Comparison {
        Comparison {
            elements,
            mismatches: 0,
            max_abs_err: 0.0,
            max_ulp_err: 0.0,
            first_mismatches: Vec::new(),
        }
    }

    fn record(&mut self, index: usize, actual: f64, expected: f64, ulps: f64, ok: bool) {
        if actual.is_finite() && expected.is_finite() {
            self.max_abs_err = self.max_abs_err.max((actual - expected).abs());
        }
        // `max` ignores NaN; ulp distances are never NaN.
        self.max_ulp_err = self.max_ulp_err.max(ulps);
        if !ok {
            self.mismatches += 1;
            if self.first_mismatches.len() < MAX_REPORTED_MISMATCHES {
                self.first_mismatches.push((index, actual, expected));
            }
        }
    }
}

/// Stored mantissa bits and minimum normal exponent of a floating type.
fn float_format(dtype: DType) -> Option<(i32, i32)> {
    Some(match dtype {
        DType::F16 => (10, -14),
        DType::BF16 => (7, -126),
        DType::F32 => (23, -126),
        DType::F64 => (52, -1022),
        DType::F8E4M3 => (3, -6),
        DType::F8E5M2 => (2, -14),
        _ => return None,
    })
}

/// `2^e` exactly, for `-1074 <= e <= 1023` (0 or infinity outside).
fn pow2(e: i32) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

/// `floor(log2(|x|))` for finite non-zero `x` (f64 subnormals report
/// -1023, below every type's minimum exponent).
fn exponent(x: f64) -> i32 {
    let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if biased == 0 { -1023 } else { biased - 1023 }
}

/// The spacing of `dtype`'s values at `x`: the distance from `|x|` to the
/// next larger magnitude of the type (`ulp(x)` in Goldberg's sense), with the
/// subnormal spacing below the smallest normal. Integers and bool have
/// spacing 1. For `x == 0` it is the smallest subnormal.
pub fn ulp_spacing(x: f64, dtype: DType) -> f64 {
    let Some((mantissa, min_exp)) = float_format(dtype) else {
        return 1.0;
    };
    let e = if x == 0.0 || !x.is_finite() {
        min_exp
    } else {
        exponent(x).max(min_exp)
    };
    pow2(e - mantissa)
}

/// The smallest positive normal value of a floating type (0 for others).
pub fn min_normal(dtype: DType) -> f64 {
    float_format(dtype).map_or(0.0, |(_, min_exp)| pow2(min_exp))
}

/// Distance from `actual` to `expected` in units of `dtype`'s spacing at
/// `expected` ([`ulp_spacing`]), always non-negative.
///
/// Two NaNs are at distance 0, NaN and a number at infinite distance; an
/// infinity is at distance 0 from the same infinity and infinitely far from
/// everything else. `+0` and `-0` are at distance 0 (use
/// [`OpClass::BitExact`] to tell them apart). Subnormals are measured in the
/// subnormal spacing, so flushing the smallest subnormal to zero is 1 ulp
/// away and flushing a large subnormal is many.
pub fn ulp_distance(actual: f64, expected: f64, dtype: DType) -> f64 {
    match (actual.is_nan(), expected.is_nan()) {
        (true, true) => return 0.0,
        (true, false) | (false, true) => return f64::INFINITY,
        (false, false) => {}
    }
    if actual.is_infinite() || expected.is_infinite() {
        return if actual == expected {
            0.0
        } else {
            f64::INFINITY
        };
    }
    (actual - expected).abs() / ulp_spacing(expected, dtype)
}

/// Whether a measured ULP distance meets a table bound.
///
/// Table bounds are *maximum errors against the exact result*, as vendor
/// math-library tables give them, while the reference tensor holds the exact
/// result already rounded to the output type. A bound of 0 therefore means
/// "correctly rounded or exact" and requires equality; a bound `k > 0`
/// allows `k + 1/2` against the rounded reference (the reference's own
/// rounding). On the grid of one binade that is `k` steps; the half step only
/// matters where the actual value falls into the finer binade below a power
/// of two.
pub fn ulps_within(distance: f64, bound: u32) -> bool {
    if bound == 0 {
        distance == 0.0
    } else {
        distance <= f64::from(bound) + 0.5
    }
}

/// The ULP bounds `(ulps, fast_math_ulps)` for an element-wise operator,
/// by its IR name (`exp2`, `rsqrt`, `div`, ...) or symbol (`+`, `/`).
///
/// Bounds are in units of the *output* type's spacing, as errors against the
/// exact result (see [`ulps_within`]); `docs/conformance.md` gives the
/// reasoning for each row. An operator the table does not know gets
/// `(0, 0)`: a typo fails loudly instead of passing silently; use
/// [`elementwise_ulps_checked`] to tell.
pub fn elementwise_ulps(op: &str) -> (u32, u32) {
    elementwise_ulps_checked(op).unwrap_or((0, 0))
}

/// [`elementwise_ulps`], or `None` for an operator the table does not know.
pub fn elementwise_ulps_checked(op: &str) -> Option<(u32, u32)> {
    Some(match op {
        // Exact or correctly rounded everywhere (IEEE 754 basic operations;
        // contraction into fma is a multi-operation concern, see the docs).
        "+" | "add" | "-" | "sub" | "*" | "mul" | "fma" | "neg" | "abs" | "min" | "max"
        | "floor" | "ceil" | "round" | "trunc" | "copy" | "cast" | "select" | "where" => (0, 0),
        // Correctly rounded in IEEE mode; we allow faithful rounding (1 ulp)
        // so that reciprocal-and-Newton implementations conform, and the
        // fast approximations (`__fdividef`, approximate sqrt) 2.
        "/" | "div" | "rcp" | "reciprocal" | "sqrt" => (1, 2),
        "rsqrt" => (2, 4),
        // The hardware's `exp2` (`ex2.approx.f32` without flush to zero,
        // which CUDA's `exp2f` compiles to) was measured at 2.06 ulps on
        // normal results and 2.38 on subnormal ones (an H200, 35 million
        // inputs): 3 ulps, OpenCL's bound for `exp2`.
        "exp2" => (3, 4),
        "log2" => (2, 4),
        "log" | "log10" => (2, 4),
        // Fast `exp`/`exp10` go through `exp2(x * log2(e))`; the rounding of
        // the product grows with |x|. 16 covers |x| up to about 10.
        "exp" | "exp10" => (2, 16),
        "sin" | "cos" => (2, 8),
        "pow" => (4, 16),
        "sigmoid" => (4, 16),
        // Hardware `tanh` approximations are accurate to about 2^-11
        // relative, i.e. half precision: the fast column is OpenCL's
        // `half_*` bound.
        "tanh" => (4, 8192),
        _ => return None,
    })
}

/// The unit roundoff of a type, 0 for integers and bool (exact arithmetic).
fn unit_roundoff(dtype: DType) -> f64 {
    dtype.unit_roundoff().unwrap_or(0.0)
}

/// `γ = (1 + 2·u_acc)^k − 1`, the relative worst-case error factor of a
/// length-`k` recursive summation (or dot product) in `acc` (0 for integer
/// accumulators). Computed without cancellation and without the
/// `1/(1 − k·u)` pole of the simplified form; saturates at `f64::MAX`
/// instead of overflowing (so `γ·0` stays 0).
pub fn accumulation_gamma(k: u64, acc: DType) -> f64 {
    let u_acc = 2.0 * unit_roundoff(acc);
    ((k as f64) * u_acc.ln_1p()).exp_m1().min(f64::MAX)
}

/// Whether the worst-case accumulation bound says nothing useful
/// (`γ ≥ 1`: an error as large as `Σ|terms|` is allowed), as for `f16`
/// accumulators with `k ≥ 711` (`(1 + 2^-10)^k ≥ 2`). Such a test proves only that the result is
/// finite where the reference is; the corpus should avoid them or mark them.
pub fn accumulation_is_vacuous(k: u64, acc: DType) -> bool {
    accumulation_gamma(k, acc) >= 1.0
}

/// The accumulation error bound for one output element.
///
/// - `expected`: the reference value (already rounded to `out`);
/// - `magnitude`: `Σ|terms|` for that element (for a dot product
///   `Σ|a_k·b_k|`), computed by the float64 oracle; pass `|expected| + 1`
///   when unknown;
/// - `k`: the reduction length, `acc`: the declared accumulator type, `out`:
///   the output type, `rounded_terms`: the type the terms' operands were
///   rounded to, when backends may round them differently
///   ([`OpClass::Accumulation::rounded_terms`]).
///
/// The bound is `(γ + u_terms)·magnitude + 2·u_out·|expected| + floor` with
/// `γ = (1 + 2·u_acc)^k − 1` (Higham's recursive-summation bound before its
/// simplification to `k·u/(1 − k·u)`, with the unit roundoff doubled to
/// admit truncating accumulators such as tensor cores), `u_out` the output
/// type's unit roundoff (the actual and the reference are each rounded once
/// to the output), and `floor` one subnormal spacing of the output (or, with
/// `fast_math`, the smallest normal of the output plus `k` smallest normals
/// of the accumulator, for flushed subnormals), and `u_terms` the unit
/// roundoff of `rounded_terms` (0 when `None`).
pub fn accumulation_bound(
    expected: f64,
    magnitude: f64,
    k: u64,
    acc: DType,
    out: DType,
    rounded_terms: Option<DType>,
    fast_math: bool,
) -> f64 {
    let gamma = accumulation_gamma(k, acc) + rounded_terms.map_or(0.0, unit_roundoff);
    let u_out = unit_roundoff(out);
    let floor = if !out.is_float() {
        0.0
    } else if fast_math {
        min_normal(out) + (k as f64) * min_normal(acc)
    } else {
        ulp_spacing(0.0, out)
    };
    gamma * magnitude.abs() + 2.0 * u_out * expected.abs() + floor
}

fn check_pair(actual: &Tensor, expected: &Tensor) -> Result<(), ToleranceError> {
    actual.check().map_err(|detail| ToleranceError::BadTensor {
        which: "actual",
        detail,
    })?;
    expected
        .check()
        .map_err(|detail| ToleranceError::BadTensor {
            which: "expected",
            detail,
        })?;
    if actual.dtype != expected.dtype {
        return Err(ToleranceError::DTypeMismatch {
            actual: actual.dtype,
            expected: expected.dtype,
        });
    }
    if actual.shape != expected.shape {
        return Err(ToleranceError::ShapeMismatch {
            actual: actual.shape.clone(),
            expected: expected.shape.clone(),
        });
    }
    Ok(())
}

/// An integer element as `i128` (u64 by its bit pattern read unsigned).
fn int_value(x: i64, dtype: DType) -> i128 {
    if dtype == DType::U64 {
        i128::from(x as u64)
    } else {
        i128::from(x)
    }
}

/// Compares an output with the reference under `class`.
///
/// For [`OpClass::Accumulation`] no per-element magnitude is known here, so
/// `|expected| + 1` stands in for `Σ|terms|`; prefer
/// [`compare_accumulation`] with the oracle's magnitudes, which is tighter
/// when values are small and sound when the sum cancels.
pub fn compare(
    actual: &Tensor,
    expected: &Tensor,
    class: &OpClass,
    fast_math: bool,
) -> Result<Comparison, ToleranceError> {
    check_pair(actual, expected)?;
    match class {
        OpClass::BitExact => Ok(compare_bit_exact(actual, expected)),
        OpClass::Elementwise {
            ulps,
            fast_math_ulps,
        } => {
            let bound = if fast_math { *fast_math_ulps } else { *ulps };
            Ok(compare_elementwise(actual, expected, bound, fast_math))
        }
        OpClass::Accumulation {
            reduction_len,
            accumulator,
            rounded_terms,
        } => {
            let e = expected.to_f64_vec();
            let magnitude: Vec<f64> = e.iter().map(|x| x.abs() + 1.0).collect();
            Ok(compare_accumulation_values(
                actual,
                expected,
                &magnitude,
                *reduction_len,
                *accumulator,
                *rounded_terms,
                fast_math,
            ))
        }
    }
}

/// Compares an accumulation output (reduction, GEMM, softmax, attention)
/// with the reference, element by element within [`accumulation_bound`],
/// given `magnitude` = `Σ|terms|` per output element from the float64
/// oracle (any float dtype, same shape as the outputs).
pub fn compare_accumulation(
    actual: &Tensor,
    expected: &Tensor,
    magnitude: &Tensor,
    reduction_len: u64,
    accumulator: DType,
    rounded_terms: Option<DType>,
    fast_math: bool,
) -> Result<Comparison, ToleranceError> {
    check_pair(actual, expected)?;
    magnitude
        .check()
        .map_err(|detail| ToleranceError::BadTensor {
            which: "magnitude",
            detail,
        })?;
    if magnitude.shape != expected.shape {
        return Err(ToleranceError::MagnitudeShape {
            found: magnitude.shape.clone(),
            expected: expected.shape.clone(),
        });
    }
    Ok(compare_accumulation_values(
        actual,
        expected,
        &magnitude.to_f64_vec(),
        reduction_len,
        accumulator,
        rounded_terms,
        fast_math,
    ))
}

fn compare_bit_exact(actual: &Tensor, expected: &Tensor) -> Comparison {
    let dtype = expected.dtype;
    let mut c = Comparison::new(expected.len());
    match (&actual.data, &expected.data) {
        (TensorData::Int(a), TensorData::Int(e)) => {
            for (i, (&x, &y)) in a.iter().zip(e).enumerate() {
                let d = (int_value(x, dtype) - int_value(y, dtype)).unsigned_abs() as f64;
                c.record(
                    i,
                    int_value(x, dtype) as f64,
                    int_value(y, dtype) as f64,
                    d,
                    x == y,
                );
            }
        }
        _ => {
            let a = actual.to_f64_vec();
            let e = expected.to_f64_vec();
            for (i, (&x, &y)) in a.iter().zip(&e).enumerate() {
                let (x, y) = (dtype.round_f64(x), dtype.round_f64(y));
                let ok = (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
                let d = ulp_distance(x, y, dtype);
                c.record(i, x, y, d, ok);
            }
        }
    }
    c
}

/// Whether `actual` is an acceptable flush to zero of a subnormal
/// `expected` (fast math only).
fn flushed_subnormal(actual: f64, expected: f64, dtype: DType) -> bool {
    dtype.is_float() && actual == 0.0 && expected.abs() < min_normal(dtype)
}

fn compare_elementwise(
    actual: &Tensor,
    expected: &Tensor,
    bound: u32,
    fast_math: bool,
) -> Comparison {
    let dtype = expected.dtype;
    let mut c = Comparison::new(expected.len());
    match (&actual.data, &expected.data) {
        (TensorData::Int(a), TensorData::Int(e)) => {
            for (i, (&x, &y)) in a.iter().zip(e).enumerate() {
                let d = (int_value(x, dtype) - int_value(y, dtype)).unsigned_abs() as f64;
                let ok = d <= f64::from(bound);
                c.record(
                    i,
                    int_value(x, dtype) as f64,
                    int_value(y, dtype) as f64,
                    d,
                    ok,
                );
            }
        }
        _ => {
            let a = actual.to_f64_vec();
            let e = expected.to_f64_vec();
            for (i, (&x, &y)) in a.iter().zip(&e).enumerate() {
                let d = ulp_distance(x, y, dtype);
                let ok = ulps_within(d, bound) || (fast_math && flushed_subnormal(x, y, dtype));
                c.record(i, x, y, d, ok);
            }
        }
    }
    c
}

fn compare_accumulation_values(
    actual: &Tensor,
    expected: &Tensor,
    magnitude: &[f64],
    k: u64,
    acc: DType,
    rounded_terms: Option<DType>,
    fast_math: bool,
) -> Comparison {
    let dtype = expected.dtype;
    let a = actual.to_f64_vec();
    let e = expected.to_f64_vec();
    let mut c = Comparison::new(e.len());
    for (i, ((&x, &y), &m)) in a.iter().zip(&e).zip(magnitude).enumerate() {
        let d = ulp_distance(x, y, dtype);
        let ok = if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
            d == 0.0
        } else {
            (x - y).abs() <= accumulation_bound(y, m, k, acc, dtype, rounded_terms, fast_math)
        };
        c.record(i, x, y, d, ok);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dtype: DType, values: &[f64]) -> Tensor {
        match Tensor::from_f64(dtype, vec![values.len()], values.to_vec()) {
            Ok(t) => t,
            Err(e) => panic!("bad test tensor: {e}"),
        }
    }

    fn cmp(dtype: DType, a: &[f64], e: &[f64], class: &OpClass, fast: bool) -> Comparison {
        match compare(&t(dtype, a), &t(dtype, e), class, fast) {
            Ok(c) => c,
            Err(e) => panic!("compare failed: {e}"),
        }
    }

    const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::BF16, DType::F8E4M3];

    #[test]
    fn spacing_at_one_zero_and_max() {
        assert_eq!(ulp_spacing(1.0, DType::F32), 2f64.powi(-23));
        assert_eq!(ulp_spacing(1.0, DType::F16), 2f64.powi(-10));
        assert_eq!(ulp_spacing(1.0, DType::BF16), 2f64.powi(-7));
        assert_eq!(ulp_spacing(1.0, DType::F8E4M3), 0.125);
        // Just below 1 the spacing is the finer binade's.
        assert_eq!(ulp_spacing(0.75, DType::F16), 2f64.powi(-11));
        // Zero and subnormals: the smallest subnormal.
        assert_eq!(ulp_spacing(0.0, DType::F32), 2f64.powi(-149));
        assert_eq!(ulp_spacing(0.0, DType::F16), 2f64.powi(-24));
        assert_eq!(ulp_spacing(0.0, DType::BF16), 2f64.powi(-133));
        assert_eq!(ulp_spacing(0.0, DType::F8E4M3), 2f64.powi(-9));
        assert_eq!(
            ulp_spacing(3.0 * 2f64.powi(-149), DType::F32),
            2f64.powi(-149)
        );
        assert_eq!(ulp_spacing(0.0, DType::F64), f64::from_bits(1));
        assert_eq!(
            ulp_spacing(f64::MIN_POSITIVE, DType::F64),
            f64::from_bits(1)
        );
        // Largest finite values.
        assert_eq!(ulp_spacing(65504.0, DType::F16), 32.0);
        assert_eq!(ulp_spacing(448.0, DType::F8E4M3), 32.0);
        let f32_max = f64::from(f32::MAX);
        assert_eq!(ulp_spacing(f32_max, DType::F32), 2f64.powi(104));
        assert_eq!(ulp_spacing(-1.0, DType::I32), 1.0);
    }

    #[test]
    fn ulp_distance_special_values() {
        for d in FLOATS {
            assert_eq!(ulp_distance(f64::NAN, f64::NAN, d), 0.0, "{d}");
            assert_eq!(ulp_distance(1.0, f64::NAN, d), f64::INFINITY, "{d}");
            assert_eq!(ulp_distance(f64::NAN, 0.0, d), f64::INFINITY, "{d}");
            assert_eq!(ulp_distance(f64::INFINITY, f64::INFINITY, d), 0.0, "{d}");
            assert_eq!(
                ulp_distance(f64::NEG_INFINITY, f64::INFINITY, d),
                f64::INFINITY,
                "{d}"
            );
            let max = d.max_finite().unwrap_or(f64::MAX);
            assert_eq!(ulp_distance(max, f64::INFINITY, d), f64::INFINITY, "{d}");
            assert_eq!(ulp_distance(f64::INFINITY, max, d), f64::INFINITY, "{d}");
            assert_eq!(ulp_distance(-0.0, 0.0, d), 0.0, "{d}");
            assert_eq!(ulp_distance(max, max, d), 0.0, "{d}");
        }
    }

    #[test]
    fn ulp_distance_steps() {
        let one_up = |d: DType| 1.0 + ulp_spacing(1.0, d);
        for d in FLOATS {
            assert_eq!(ulp_distance(one_up(d), 1.0, d), 1.0, "{d}");
            assert_eq!(ulp_distance(1.0, one_up(d), d), 1.0, "{d}");
            // The smallest subnormal against zero is one step.
            let tiny = ulp_spacing(0.0, d);
            assert_eq!(DType::round_f64(d, tiny), tiny, "{d}");
            assert_eq!(ulp_distance(tiny, 0.0, d), 1.0, "{d}");
            assert_eq!(ulp_distance(0.0, 3.0 * tiny, d), 3.0, "{d}");
            // One step below the largest finite value.
            let max = d.max_finite().unwrap_or(f64::MAX);
            let below = max - ulp_spacing(max, d);
            assert_eq!(d.round_f64(below), below, "{d}");
            assert_eq!(ulp_distance(below, max, d), 1.0, "{d}");
        }
        // Below a power of two the actual lies in the finer binade: half steps.
        let below_one = 1.0 - 2f64.powi(-11);
        assert_eq!(ulp_distance(below_one, 1.0, DType::F16), 0.5);
    }

    #[test]
    fn bit_exact_distinguishes_signed_zero_and_matches_nan() {
        for d in FLOATS {
            let c = cmp(
                d,
                &[0.0, f64::NAN, 1.0],
                &[0.0, f64::NAN, 1.0],
                &OpClass::BitExact,
                false,
            );
            assert!(c.passed(), "{d}: {c:?}");
            let c = cmp(d, &[-0.0], &[0.0], &OpClass::BitExact, false);
            assert_eq!(c.mismatches, 1, "{d}");
            let step = 1.0 + ulp_spacing(1.0, d);
            let c = cmp(d, &[step], &[1.0], &OpClass::BitExact, false);
            assert_eq!(c.mismatches, 1, "{d}");
            assert_eq!(c.max_ulp_err, 1.0, "{d}");
        }
        // Infinities (not representable in e4m3: they round to NaN there).
        let c = cmp(
            DType::F16,
            &[f64::INFINITY],
            &[f64::INFINITY],
            &OpClass::BitExact,
            false,
        );
        assert!(c.passed());
        let c = cmp(
            DType::F16,
            &[f64::INFINITY],
            &[f64::NEG_INFINITY],
            &OpClass::BitExact,
            false,
        );
        assert!(!c.passed());
    }

    #[test]
    fn bit_exact_integers() {
        let a = Tensor::from_i64(DType::U64, vec![2], vec![-1, 5]);
        let e = Tensor::from_i64(DType::U64, vec![2], vec![-2, 5]);
        let (Ok(a), Ok(e)) = (a, e) else {
            panic!("bad tensors")
        };
        let c = match compare(&a, &e, &OpClass::BitExact, false) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(c.mismatches, 1);
        assert_eq!(c.max_ulp_err, 1.0);
        assert_eq!(
            c.first_mismatches,
            vec![(0, u64::MAX as f64, (u64::MAX - 1) as f64)]
        );
    }

    #[test]
    fn elementwise_bounds() {
        let exact = OpClass::elementwise("+");
        // `log2` is a 2-ulp operator.
        let two_ulps = OpClass::elementwise("log2");
        for d in FLOATS {
            let s = ulp_spacing(1.0, d);
            assert!(cmp(d, &[1.0], &[1.0], &exact, false).passed(), "{d}");
            assert!(!cmp(d, &[1.0 + s], &[1.0], &exact, false).passed(), "{d}");
            assert!(
                cmp(d, &[1.0 + 2.0 * s], &[1.0], &two_ulps, false).passed(),
                "{d}"
            );
            assert!(
                !cmp(d, &[1.0 + 3.0 * s], &[1.0], &two_ulps, false).passed(),
                "{d}"
            );
            assert!(
                cmp(d, &[1.0 + 3.0 * s], &[1.0], &two_ulps, true).passed(),
                "{d}"
            );
            // `exp2` allows 3.
            let exp2 = OpClass::elementwise("exp2");
            assert!(
                cmp(d, &[1.0 + 3.0 * s], &[1.0], &exp2, false).passed(),
                "{d}"
            );
            assert!(
                !cmp(d, &[1.0 + 4.0 * s], &[1.0], &exp2, false).passed(),
                "{d}"
            );
            // NaN only matches NaN.
            assert!(
                cmp(d, &[f64::NAN], &[f64::NAN], &two_ulps, false).passed(),
                "{d}"
            );
            assert!(
                !cmp(d, &[f64::NAN], &[1.0], &two_ulps, true).passed(),
                "{d}"
            );
            assert!(
                !cmp(d, &[0.0], &[f64::NAN], &two_ulps, true).passed(),
                "{d}"
            );
            // Signed zeros are equal outside the bit-exact class.
            assert!(cmp(d, &[-0.0], &[0.0], &exact, false).passed(), "{d}");
        }
        // Below a power of two the grid is twice as fine: a correctly rounded
        // op must still be exact, a k-ulp op gets k + 1/2.
        let h = 2f64.powi(-11);
        assert!(!cmp(DType::F16, &[1.0 - h], &[1.0], &exact, false).passed());
        assert!(cmp(DType::F16, &[1.0 - 5.0 * h], &[1.0], &two_ulps, false).passed());
        assert!(!cmp(DType::F16, &[1.0 - 6.0 * h], &[1.0], &two_ulps, false).passed());
        assert!(ulps_within(0.0, 0) && !ulps_within(0.5, 0));
        assert!(ulps_within(2.5, 2) && !ulps_within(3.0, 2));
        // Infinity must match exactly, even at a loose bound.
        let tanh = OpClass::elementwise("tanh");
        assert!(cmp(DType::F32, &[f64::INFINITY], &[f64::INFINITY], &tanh, true).passed());
        assert!(
            !cmp(
                DType::F32,
                &[f64::from(f32::MAX)],
                &[f64::INFINITY],
                &tanh,
                true
            )
            .passed()
        );
        assert!(!cmp(DType::F16, &[f64::INFINITY], &[65504.0], &tanh, true).passed());
    }

    #[test]
    fn subnormal_flush_only_with_fast_math() {
        let exp = OpClass::elementwise("exp");
        let sub = 100.0 * 2f64.powi(-149);
        assert!(!cmp(DType::F32, &[0.0], &[sub], &exp, false).passed());
        assert!(cmp(DType::F32, &[0.0], &[sub], &exp, true).passed());
        assert!(cmp(DType::F32, &[-0.0], &[sub], &exp, true).passed());
        // Normal values are never flushed.
        let normal = 2f64.powi(-126);
        assert!(!cmp(DType::F32, &[0.0], &[normal], &exp, true).passed());
    }

    #[test]
    fn ulp_table() {
        assert_eq!(elementwise_ulps("+"), (0, 0));
        assert_eq!(elementwise_ulps("fma"), (0, 0));
        assert_eq!(elementwise_ulps("sqrt"), (1, 2));
        assert_eq!(elementwise_ulps("rsqrt"), (2, 4));
        assert_eq!(elementwise_ulps("exp2"), (3, 4));
        assert_eq!(elementwise_ulps("tanh"), (4, 8192));
        assert_eq!(elementwise_ulps("no_such_op"), (0, 0));
        assert_eq!(elementwise_ulps_checked("no_such_op"), None);
        for op in [
            "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos",
        ] {
            let (u, f) = elementwise_ulps(op);
            assert!(u > 0 && f >= u, "{op}");
        }
    }

    #[test]
    fn accumulation_bound_edges() {
        // f32 accumulator, K = 1024, f16 output, value 1, magnitude 100.
        let k = 1024;
        let (e, m) = (1.0, 100.0);
        let bound = accumulation_bound(e, m, k, DType::F32, DType::F32, None, false);
        let gamma = ((k as f64) * (2.0 * 2f64.powi(-24)).ln_1p()).exp_m1();
        let expected_bound = gamma * m + 2.0 * 2f64.powi(-24) * e + 2f64.powi(-149);
        assert_eq!(bound, expected_bound);
        // γ ≈ K·2u for small K·u.
        assert!((gamma / (k as f64 * 2f64.powi(-23)) - 1.0).abs() < 1e-3);
        // Integer accumulation into an integer output is exact.
        assert_eq!(
            accumulation_bound(5.0, 10.0, 64, DType::I32, DType::I32, None, false),
            0.0
        );
        // γ is finite where K·u ≥ 1 (no 1/(1 − K·u) pole) ...
        assert!(accumulation_gamma(2048, DType::F16) > 1.0);
        assert!(accumulation_gamma(2048, DType::F16).is_finite());
        // ... but the worst-case bound is then vacuous, and says so.
        assert!(!accumulation_is_vacuous(1024, DType::F32));
        assert!(accumulation_is_vacuous(1024, DType::F16));
        assert!(accumulation_is_vacuous(711, DType::F16));
        assert!(!accumulation_is_vacuous(710, DType::F16));
        assert_eq!(accumulation_gamma(1 << 20, DType::F16), f64::MAX);
        assert!(accumulation_bound(1.0, 1.0, 1 << 20, DType::F16, DType::F16, None, false) > 1e300);
        assert_eq!(
            accumulation_bound(0.0, 0.0, 1 << 20, DType::F16, DType::F16, None, false),
            2f64.powi(-24)
        );
        // Even a vacuous bound does not let NaN or infinity through.
        let class = OpClass::Accumulation {
            reduction_len: 1 << 20,
            accumulator: DType::F16,
            rounded_terms: None,
        };
        assert!(!cmp(DType::F16, &[f64::NAN], &[1.0], &class, false).passed());
        assert!(!cmp(DType::F16, &[f64::INFINITY], &[1.0], &class, false).passed());
        assert!(cmp(DType::F16, &[-60000.0], &[1.0], &class, false).passed());
    }

    #[test]
    fn accumulation_just_inside_and_just_outside() {
        let (k, acc, out) = (4096u64, DType::F32, DType::F32);
        let expected = 3.0;
        let magnitude = 2000.0;
        let bound = accumulation_bound(expected, magnitude, k, acc, out, None, false);
        // Pick representable f32 values just inside and just outside.
        let spacing = ulp_spacing(expected, out);
        let steps = (bound / spacing).floor();
        let inside = expected + steps * spacing;
        let outside = expected + (steps + 1.0) * spacing;
        assert!(inside - expected <= bound && outside - expected > bound);
        let e = t(out, &[expected, expected]);
        let a = t(out, &[inside, outside]);
        let m = t(DType::F64, &[magnitude, magnitude]);
        let c = match compare_accumulation(&a, &e, &m, k, acc, None, false) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(c.mismatches, 1, "{c:?}");
        assert_eq!(c.first_mismatches, vec![(1, outside, expected)]);
        assert!(c.max_abs_err > bound);
        // Symmetric below the reference.
        let a = t(
            out,
            &[
                expected - steps * spacing,
                expected - (steps + 1.0) * spacing,
            ],
        );
        let c = match compare_accumulation(&a, &e, &m, k, acc, None, false) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(c.mismatches, 1);
    }

    #[test]
    fn rounded_terms_widen_the_bound_by_one_rounding() {
        // Attention-like: output 7.5e-3, Σ|terms| 0.8, 64 terms, f16 output.
        let plain = accumulation_bound(7.5e-3, 0.8, 64, DType::F32, DType::F16, None, false);
        let rounded = accumulation_bound(
            7.5e-3,
            0.8,
            64,
            DType::F32,
            DType::F16,
            Some(DType::F16),
            false,
        );
        assert!(plain < 1.2e-4, "{plain}");
        assert!(
            (rounded - plain - 0.8 * 2f64.powi(-11)).abs() < 1e-12,
            "{rounded}"
        );
        // The class reads it from JSON, and omits it when absent.
        let class: OpClass = serde_json::from_str(
            r#"{"Accumulation": {"reduction_len": 64, "accumulator": "F32", "rounded_terms": "F16"}}"#,
        )
        .expect("a class");
        assert!(matches!(
            class,
            OpClass::Accumulation {
                rounded_terms: Some(DType::F16),
                ..
            }
        ));
    }

    #[test]
    fn accumulation_without_magnitude_uses_abs_plus_one() {
        let class = OpClass::Accumulation {
            reduction_len: 128,
            accumulator: DType::F32,
            rounded_terms: None,
        };
        // Scale |e| + 1 = 1.5; the bound is one f16 step at 0.5 (2·u_out·|e|,
        // for the two roundings to f16) plus γ·1.5, less than two steps.
        let bound = accumulation_bound(0.5, 1.5, 128, DType::F32, DType::F16, None, false);
        let step = 2f64.powi(-11);
        assert!(bound > step && bound < 2.0 * step, "{bound}");
        assert!(cmp(DType::F16, &[0.5], &[0.5], &class, false).passed());
        assert!(cmp(DType::F16, &[0.5 + step], &[0.5], &class, false).passed());
        assert!(!cmp(DType::F16, &[0.5 + 2.0 * step], &[0.5], &class, false).passed());
        // NaN and infinity rules hold for accumulations too.
        assert!(cmp(DType::F16, &[f64::NAN], &[f64::NAN], &class, false).passed());
        assert!(!cmp(DType::F16, &[1.0], &[f64::NAN], &class, false).passed());
        assert!(!cmp(DType::F16, &[65504.0], &[f64::INFINITY], &class, false).passed());
        assert!(
            cmp(
                DType::F16,
                &[f64::INFINITY],
                &[f64::INFINITY],
                &class,
                false
            )
            .passed()
        );
    }

    #[test]
    fn mismatched_tensors_are_errors() {
        let a = t(DType::F32, &[1.0, 2.0]);
        let b = t(DType::F16, &[1.0, 2.0]);
        let c = t(DType::F32, &[1.0]);
        assert!(matches!(
            compare(&a, &b, &OpClass::BitExact, false),
            Err(ToleranceError::DTypeMismatch { .. })
        ));
        assert!(matches!(
            compare(&a, &c, &OpClass::BitExact, false),
            Err(ToleranceError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            compare_accumulation(&a, &a, &c, 4, DType::F32, None, false),
            Err(ToleranceError::MagnitudeShape { .. })
        ));
    }

    #[test]
    fn comparison_message_names_first_mismatch() {
        let c = cmp(
            DType::F32,
            &[1.0, 5.0],
            &[1.0, 4.0],
            &OpClass::BitExact,
            false,
        );
        let m = c.message();
        assert!(m.starts_with("1/2 elements"), "{m}");
        assert!(m.contains("[1]"), "{m}");
    }
}
