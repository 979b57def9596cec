//! Host tensors: the arguments and results of an interpreter run.

use super::error::InterpError;
use super::scalar::int_to_f64;
use super::{Tensor, TensorData};
use crate::ir::DType;

/// Number of elements of a row-major array of `shape`, or `None` on
/// overflow.
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e))
}

impl Tensor {
    /// A tensor of zeros (`false` for bool).
    ///
    /// # Panics
    /// When the number of elements overflows `usize` ([`super::param_shapes`]
    /// never returns such a shape).
    pub fn zeros(dtype: DType, shape: impl Into<Vec<usize>>) -> Tensor {
        let shape = shape.into();
        let count = element_count(&shape).unwrap_or(usize::MAX);
        let data = if dtype.is_float() {
            TensorData::Float(vec![0.0; count])
        } else {
            TensorData::Int(vec![0; count])
        };
        Tensor { dtype, shape, data }
    }

    /// A tensor holding `values` (row-major) converted to `dtype` as a cast
    /// does: rounded to nearest even for floats, truncated and wrapped for
    /// integers, non-zero for bool.
    pub fn from_f64(
        dtype: DType,
        shape: impl Into<Vec<usize>>,
        values: Vec<f64>,
    ) -> Result<Tensor, InterpError> {
        let shape = shape.into();
        check_length(&shape, values.len())?;
        let data = if dtype.is_float() {
            TensorData::Float(values.into_iter().map(|x| dtype.round_f64(x)).collect())
        } else {
            TensorData::Int(
                values
                    .into_iter()
                    .map(|x| dtype.round_f64(x) as i64)
                    .collect(),
            )
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// A tensor of an integer or bool type holding `values` (row-major)
    /// wrapped to `dtype`. For a float `dtype` the values are converted and
    /// rounded.
    pub fn from_i64(
        dtype: DType,
        shape: impl Into<Vec<usize>>,
        values: Vec<i64>,
    ) -> Result<Tensor, InterpError> {
        let shape = shape.into();
        check_length(&shape, values.len())?;
        let data = if dtype.is_float() {
            TensorData::Float(
                values
                    .into_iter()
                    .map(|v| dtype.round_f64(v as f64))
                    .collect(),
            )
        } else {
            TensorData::Int(values.into_iter().map(|v| dtype.wrap_i64(v)).collect())
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// The elements as `f64` (integers by value; `u64` as unsigned).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match &self.data {
            TensorData::Float(v) => v.clone(),
            TensorData::Int(v) => v.iter().map(|&x| int_to_f64(x, self.dtype)).collect(),
        }
    }

    /// Number of elements stored.
    pub fn len(&self) -> usize {
        match &self.data {
            TensorData::Float(v) => v.len(),
            TensorData::Int(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the storage class fits the dtype and that the number of
    /// elements fits the shape; on failure says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let float_storage = matches!(self.data, TensorData::Float(_));
        if float_storage != self.dtype.is_float() {
            return Err(format!(
                "{} data stored as {}",
                self.dtype,
                if float_storage { "floats" } else { "integers" }
            ));
        }
        match element_count(&self.shape) {
            Some(n) if n == self.len() => Ok(()),
            _ => Err(format!(
                "shape {:?} does not hold {} elements",
                self.shape,
                self.len()
            )),
        }
    }
}

fn check_length(shape: &[usize], found: usize) -> Result<(), InterpError> {
    match element_count(shape) {
        Some(n) if n == found => Ok(()),
        _ => Err(InterpError::BadTensor {
            detail: format!("shape {shape:?} does not hold {found} values"),
        }),
    }
}
