//! The reference interpreter: runs tile-level IR on the CPU.
//!
//! (Implementation in progress: the public API below is stable.)

use crate::ir::{DType, Function};
use std::collections::BTreeMap;

/// Element storage of a [`Tensor`]. Floating-point elements are `f64`
/// already rounded to the tensor's dtype; integer and bool elements are `i64`
/// wrapped to the dtype (`u64` keeps its bit pattern).
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

/// A dense row-major host array passed to or returned from a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: TensorData,
}

/// Values of symbolic sizes, by variable name.
pub type SymbolValues = BTreeMap<String, i64>;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("interpreter not implemented yet")]
    Unimplemented,
}

/// Runs every kernel of `func` on `args` (one tensor per parameter, in
/// order), in place.
pub fn run(func: &Function, args: &mut [Tensor]) -> Result<(), InterpError> {
    let _ = (func, args);
    Err(InterpError::Unimplemented)
}
