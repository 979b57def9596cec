//! Element-wise comparison of a kernel's results with expected values, for
//! `tilec run --check`.
//!
//! An element matches when `|actual - expected| <= atol + rtol * |expected|`
//! (NumPy's `isclose` rule), with two refinements for special values: NaN
//! matches only NaN, and an infinity matches only the same infinity.

use serde::Serialize;
use tilec_core::interp::Tensor;

/// How many mismatching elements a comparison lists.
pub const MAX_LISTED: usize = 5;

/// Whether `actual` is close enough to `expected`.
pub fn element_matches(actual: f64, expected: f64, atol: f64, rtol: f64) -> bool {
    if expected.is_nan() || actual.is_nan() {
        return expected.is_nan() && actual.is_nan();
    }
    if expected.is_infinite() || actual.is_infinite() {
        return actual == expected;
    }
    (actual - expected).abs() <= atol + rtol * expected.abs()
}

/// One element that did not match.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Multi-dimensional index of the element.
    pub index: Vec<usize>,
    pub actual: f64,
    pub expected: f64,
}

/// The outcome of comparing one tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub atol: f64,
    pub rtol: f64,
    /// Elements compared.
    pub total: usize,
    pub mismatches: usize,
    /// Largest `|actual - expected|` over elements where both are finite.
    pub max_abs_err: f64,
    /// Largest `|actual - expected| / |expected|` over elements where both
    /// are finite (infinite when a non-zero value was expected to be zero).
    pub max_rel_err: f64,
    /// The first [`MAX_LISTED`] mismatching elements, in row-major order.
    pub first_mismatches: Vec<Mismatch>,
    /// Set when the tensors cannot be compared element by element.
    pub shape_error: Option<String>,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.shape_error.is_none() && self.mismatches == 0
    }
}

/// Compares `actual` with `expected` under the given tolerances.
pub fn compare(actual: &Tensor, expected: &Tensor, atol: f64, rtol: f64) -> Comparison {
    let mut result = Comparison {
        atol,
        rtol,
        total: 0,
        mismatches: 0,
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        first_mismatches: Vec::new(),
        shape_error: None,
    };
    if actual.shape != expected.shape {
        result.shape_error = Some(format!(
            "the kernel wrote shape {:?}, the reference has shape {:?}",
            actual.shape, expected.shape
        ));
        return result;
    }
    let actual_values = actual.to_f64_vec();
    let expected_values = expected.to_f64_vec();
    if actual_values.len() != expected_values.len() {
        result.shape_error = Some(format!(
            "the kernel wrote {} elements, the reference has {}",
            actual_values.len(),
            expected_values.len()
        ));
        return result;
    }
    result.total = actual_values.len();
    for (flat, (&a, &e)) in actual_values.iter().zip(&expected_values).enumerate() {
        if a.is_finite() && e.is_finite() {
            let abs_err = (a - e).abs();
            let rel_err = if e != 0.0 {
                abs_err / e.abs()
            } else if abs_err == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            result.max_abs_err = result.max_abs_err.max(abs_err);
            result.max_rel_err = result.max_rel_err.max(rel_err);
        }
        if !element_matches(a, e, atol, rtol) {
            result.mismatches += 1;
            if result.first_mismatches.len() < MAX_LISTED {
                result.first_mismatches.push(Mismatch {
                    index: unflatten(flat, &actual.shape),
                    actual: a,
                    expected: e,
                });
            }
        }
    }
    result
}

/// The multi-dimensional index of row-major element `flat`.
pub fn unflatten(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (slot, &extent) in index.iter_mut().zip(shape).rev() {
        if extent > 0 {
            *slot = flat % extent;
            flat /= extent;
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::interp::TensorData;
    use tilec_core::ir::DType;

    fn t(values: Vec<f64>) -> Tensor {
        Tensor {
            dtype: DType::F32,
            shape: vec![values.len()],
            data: TensorData::Float(values),
        }
    }

    #[test]
    fn tolerance_rule() {
        assert!(element_matches(1.0, 1.0, 0.0, 0.0));
        // Values exact in binary, so the boundary cases are exact too.
        assert!(element_matches(1.25, 1.0, 0.0, 0.25));
        assert!(element_matches(0.75, 1.0, 0.0, 0.25));
        assert!(!element_matches(1.375, 1.0, 0.0, 0.25));
        assert!(element_matches(1.5, 1.0, 0.25, 0.25));
        assert!(element_matches(0.125, 0.0, 0.125, 0.5));
        assert!(!element_matches(0.25, 0.0, 0.125, 0.5));
    }

    #[test]
    fn nan_matches_only_nan() {
        let nan = f64::NAN;
        assert!(element_matches(nan, nan, 0.0, 0.0));
        assert!(!element_matches(nan, 1.0, 1e9, 1e9));
        assert!(!element_matches(1.0, nan, 1e9, 1e9));
    }

    #[test]
    fn infinities_match_exactly() {
        let inf = f64::INFINITY;
        assert!(element_matches(inf, inf, 0.0, 0.0));
        assert!(element_matches(-inf, -inf, 0.0, 0.0));
        assert!(!element_matches(inf, -inf, 1e9, 1e9));
        assert!(!element_matches(1e300, inf, 1e9, 1e9));
        assert!(!element_matches(inf, 1e300, 1e9, 1e9));
    }

    #[test]
    fn comparison_reports_errors_and_first_mismatches() {
        let actual = t(vec![1.0, 2.5, f64::NAN, 4.0, 0.5]);
        let expected = t(vec![1.0, 2.0, 3.0, 4.0, 0.0]);
        let c = compare(&actual, &expected, 0.0, 0.1);
        assert_eq!(c.total, 5);
        assert_eq!(c.mismatches, 3);
        assert!(!c.passed());
        assert_eq!(c.max_abs_err, 0.5);
        assert_eq!(c.max_rel_err, f64::INFINITY);
        let listed: Vec<Vec<usize>> = c.first_mismatches.iter().map(|m| m.index.clone()).collect();
        assert_eq!(listed, vec![vec![1], vec![2], vec![4]]);

        let same = compare(&expected, &expected, 0.0, 0.0);
        assert!(same.passed());
        assert_eq!((same.max_abs_err, same.max_rel_err), (0.0, 0.0));
    }

    #[test]
    fn shape_mismatch_fails() {
        let c = compare(&t(vec![1.0]), &t(vec![1.0, 2.0]), 1.0, 1.0);
        assert!(!c.passed());
        assert!(c.shape_error.is_some());
    }

    #[test]
    fn unflatten_is_row_major() {
        assert_eq!(unflatten(5, &[2, 3]), vec![1, 2]);
        assert_eq!(unflatten(0, &[]), Vec::<usize>::new());
        assert_eq!(unflatten(23, &[2, 3, 4]), vec![1, 2, 3]);
    }
}
