//! Independent plain-Rust references for the example kernels in `examples/`.
//!
//! `tilec run --check` looks a reference up by the example file's stem
//! (`gemm`, `softmax`, ...), hands it the builder call the front end reported
//! and every kernel parameter as it stands before the run (inputs filled,
//! outputs poisoned, in-place parameters holding their initial values), and
//! compares what the kernel wrote with what the reference returns.
//!
//! The references compute straight from each kernel's mathematical
//! definition in `f64` — never by interpreting IR, and without the kernels'
//! tiling, pipelining or reduced-precision intermediates — and round only
//! the final result to the output parameter's dtype. They read shapes from
//! the tensors; the builder's parameters supply the flags that shapes cannot
//! tell (`trans_A`, `is_causal`, `eps`) and are cross-checked against the
//! shapes where they name a size.

mod attention;
mod elementwise;
mod gemm;
mod norm;
mod reduce;

use tilec_core::front::py::{CallArg, KernelCall};
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;

/// The expected tensor of each parameter a kernel writes, by parameter index.
type Outputs = Vec<(usize, Tensor)>;

/// The expected contents of each parameter the kernel of example `stem`
/// writes, by parameter index, computed from `args` (every parameter before
/// the run, in order). `Ok(None)`: no reference exists for `stem`.
/// `Err`: the arguments do not fit the example (count, rank or shape), or a
/// builder parameter has a value of the wrong kind.
pub fn expected(
    stem: &str,
    call: Option<&KernelCall>,
    args: &[Tensor],
) -> Result<Option<Vec<(usize, Tensor)>>, String> {
    let params = Params { call };
    let outputs = match stem {
        "elementwise_add" => elementwise::add(&params, args),
        "guarded_copy" => elementwise::copy(&params, args),
        "gemm" => gemm::matmul(&params, args),
        "gemm_bias_relu" => gemm::matmul_bias_relu(&params, args),
        "gemm_splitk" => gemm::matmul_splitk(&params, args),
        "gemm_ws" => gemm::matmul(&params, args),
        "gemv" => gemm::gemv(&params, args),
        "softmax" => reduce::softmax(&params, args),
        "row_reduce" => reduce::row_reduce(&params, args),
        "rmsnorm" => norm::rmsnorm(&params, args),
        "layernorm" => norm::layernorm(&params, args),
        "flash_attention" => attention::flash_attention(&params, args),
        "flash_attention_gqa" => attention::flash_attention_gqa(&params, args),
        _ => return Ok(None),
    };
    outputs.map(Some).map_err(|e| format!("{stem}: {e}"))
}

/// Absolute and relative tolerance (`|actual - expected| <= atol + rtol *
/// |expected|`) for comparing a kernel's results of `dtype` with a reference.
///
/// The kernels accumulate in float32 and round once to the output type,
/// while the references compute in f64 and round once: the two usually agree
/// to the last place and differ by one unit in the last place (ulp) where
/// the f32 and f64 values fall on either side of a rounding boundary.
/// Each float tolerance therefore covers a few ulps of its type and a
/// float32 accumulation error of the example sizes (sums of a few hundred
/// unit-normal products), with margin:
/// - f16: 1 ulp is 2^-10 ≈ 1e-3 relative, so 1e-2 leaves 10 ulps.
/// - bf16: 1 ulp is 2^-7 ≈ 7.8e-3 relative; 2e-2 leaves about 2.5 ulps.
/// - f32: 1 ulp is 1.2e-7 relative; an f32 sum of n = 512 terms of size
///   about 1 drifts by about sqrt(n) · 2^-24 · |terms| ≈ 1e-5, under 1e-4.
/// - f64: the kernel's f64 arithmetic only reorders sums: ~1e-13 here.
/// - fp8: one ulp is 2^-3 (E4M3) or 2^-2 (E5M2) of the value, so the
///   tolerance is one such ulp, absolute and relative.
///
/// Softmax and attention need nothing looser. Softmax outputs lie in [0, 1]
/// and are computed in f32 before the single rounding. Attention outputs
/// are convex combinations of rows of V; the kernels round the probabilities
/// to f16 before the P·V product (2^-11 relative each), which moves an
/// output by at most 2^-11 · max|V| ≈ 2.5e-3 for unit-normal V (|V| < 5),
/// a quarter of the f16 atol. Integer and bool results must match exactly.
pub fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (1e-2, 1e-2),
        DType::BF16 => (2e-2, 2e-2),
        DType::F32 => (1e-4, 1e-4),
        DType::F64 => (1e-10, 1e-10),
        DType::F8E4M3 => (0.125, 0.125),
        DType::F8E5M2 => (0.25, 0.25),
        DType::Bool
        | DType::I8
        | DType::I16
        | DType::I32
        | DType::I64
        | DType::U8
        | DType::U16
        | DType::U32
        | DType::U64 => (0.0, 0.0),
    }
}

/// The builder's parameter values as the front end reported them; absent
/// ones (or no call at all) fall back to the defaults of `examples/`.
#[derive(Clone, Copy, Debug)]
struct Params<'a> {
    call: Option<&'a KernelCall>,
}

impl Params<'_> {
    fn get(&self, name: &str) -> Option<&CallArg> {
        self.call.and_then(|c| c.arg(name))
    }

    /// A boolean parameter such as `trans_A` or `is_causal` (Python ints
    /// count by truth value, as they would in the builder's `if`).
    fn flag(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.get(name) {
            None => Ok(default),
            Some(CallArg::Bool(b)) => Ok(*b),
            Some(CallArg::Int(i)) => Ok(*i != 0),
            Some(other) => Err(format!("parameter {name} should be a bool, got {other:?}")),
        }
    }

    /// A float parameter such as `eps` (an int is accepted, as in Python).
    fn float(&self, name: &str, default: f64) -> Result<f64, String> {
        match self.get(name) {
            None => Ok(default),
            Some(CallArg::Float(f)) => Ok(*f),
            Some(CallArg::Int(i)) => Ok(*i as f64),
            Some(other) => Err(format!(
                "parameter {name} should be a number, got {other:?}"
            )),
        }
    }

    /// Checks a size parameter (`M`, `seq_len`, ...) against the size the
    /// tensors have; a parameter that is absent or not an int is not checked.
    fn check_size(&self, name: &str, actual: usize) -> Result<(), String> {
        match self.get(name) {
            Some(CallArg::Int(v)) if usize::try_from(*v).ok() != Some(actual) => Err(format!(
                "the call has {name} = {v} but the tensors have {name} = {actual}"
            )),
            _ => Ok(()),
        }
    }

    /// [`Params::check_size`] for several sizes.
    fn check_sizes(&self, sizes: &[(&str, usize)]) -> Result<(), String> {
        sizes
            .iter()
            .try_for_each(|&(name, actual)| self.check_size(name, actual))
    }
}

/// Checks that `args` holds one tensor for each of the parameters `names`.
fn check_arity(args: &[Tensor], names: &[&str]) -> Result<(), String> {
    if args.len() == names.len() {
        Ok(())
    } else {
        Err(format!(
            "expected {} parameters ({}), got {}",
            names.len(),
            names.join(", "),
            args.len()
        ))
    }
}

/// The shape of `tensor` (parameter `name`), which must have rank `R`.
fn dims<const R: usize>(tensor: &Tensor, name: &str) -> Result<[usize; R], String> {
    <[usize; R]>::try_from(tensor.shape.as_slice())
        .map_err(|_| format!("{name} should have rank {R}, got shape {:?}", tensor.shape))
}

/// Checks that `tensor` (parameter `name`) has shape `expected`.
fn require_shape(tensor: &Tensor, name: &str, expected: &[usize]) -> Result<(), String> {
    if tensor.shape == expected {
        Ok(())
    } else {
        Err(format!(
            "{name} should have shape {expected:?}, got {:?}",
            tensor.shape
        ))
    }
}

/// The elements of `tensor` (parameter `name`) as `f64`, row-major; the
/// element count must match the shape.
fn values(tensor: &Tensor, name: &str) -> Result<Vec<f64>, String> {
    let count = tensor
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| format!("{name} has an impossibly large shape {:?}", tensor.shape))?;
    let data: Vec<f64> = match &tensor.data {
        TensorData::Float(v) => v.clone(),
        TensorData::Int(v) => v.iter().map(|&x| x as f64).collect(),
    };
    if data.len() == count {
        Ok(data)
    } else {
        Err(format!(
            "{name} has shape {:?} ({count} elements) but holds {}",
            tensor.shape,
            data.len()
        ))
    }
}

/// A tensor of the dtype and shape of `like` (the output parameter) holding
/// `values` rounded to that dtype.
fn output(like: &Tensor, values: Vec<f64>) -> Tensor {
    let dtype = like.dtype;
    let data = if dtype.is_float() {
        TensorData::Float(values.into_iter().map(|x| dtype.round_f64(x)).collect())
    } else {
        // `round_f64` converts as a cast does (truncate, wrap); the result
        // is an integer-valued f64 that `as` carries over exactly.
        TensorData::Int(
            values
                .into_iter()
                .map(|x| dtype.round_f64(x) as i64)
                .collect(),
        )
    };
    Tensor {
        dtype,
        shape: like.shape.clone(),
        data,
    }
}

#[cfg(test)]
mod test_util {
    //! Helpers shared by the references' unit tests.

    use super::*;

    /// A float tensor of `dtype` holding `values` (already representable).
    pub fn tensor(dtype: DType, shape: &[usize], values: &[f64]) -> Tensor {
        Tensor {
            dtype,
            shape: shape.to_vec(),
            data: TensorData::Float(values.to_vec()),
        }
    }

    /// An output parameter of `dtype` and `shape`, poisoned with NaN as the
    /// command line does before a run.
    pub fn poisoned(dtype: DType, shape: &[usize]) -> Tensor {
        let n = shape.iter().product();
        tensor(dtype, shape, &vec![f64::NAN; n])
    }

    /// A builder call binding `args`.
    pub fn call(builder: &str, args: &[(&str, CallArg)]) -> KernelCall {
        KernelCall {
            builder: builder.to_string(),
            args: args
                .iter()
                .map(|(n, v)| ((*n).to_string(), v.clone()))
                .collect(),
        }
    }

    /// Runs the reference of `stem` and returns its outputs, failing when
    /// there is no reference.
    pub fn run(
        stem: &str,
        call: Option<&KernelCall>,
        args: &[Tensor],
    ) -> Result<Vec<(usize, Tensor)>, String> {
        expected(stem, call, args)?.ok_or_else(|| format!("no reference for {stem}"))
    }

    /// The single output of a reference, checked to be parameter `index`.
    pub fn single(outputs: Vec<(usize, Tensor)>, index: usize) -> Result<Tensor, String> {
        match <[(usize, Tensor); 1]>::try_from(outputs) {
            Ok([(i, t)]) if i == index => Ok(t),
            Ok([(i, _)]) => Err(format!("output index {i}, expected {index}")),
            Err(v) => Err(format!("{} outputs, expected one", v.len())),
        }
    }

    /// Asserts that `t` holds `expected` within `tol` (absolute).
    pub fn assert_close(t: &Tensor, expected: &[f64], tol: f64) -> Result<(), String> {
        let got = values(t, "result")?;
        if got.len() != expected.len() {
            return Err(format!("got {got:?}, expected {expected:?}"));
        }
        for (g, e) in got.iter().zip(expected) {
            if (g - e).abs() > tol {
                return Err(format!("got {got:?}, expected {expected:?}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn unknown_stem_has_no_reference() -> Result<(), String> {
        let args = [tensor(DType::F32, &[1], &[1.0])];
        assert_eq!(expected("no_such_example", None, &args)?, None);
        Ok(())
    }

    #[test]
    fn errors_name_the_example() {
        let err = expected("softmax", None, &[]);
        assert!(matches!(err, Err(ref e) if e.starts_with("softmax: expected 2 parameters")));
    }

    #[test]
    fn tolerances() {
        assert_eq!(tolerance(DType::F16), (1e-2, 1e-2));
        assert_eq!(tolerance(DType::BF16), (2e-2, 2e-2));
        assert_eq!(tolerance(DType::F32), (1e-4, 1e-4));
        assert_eq!(tolerance(DType::F64), (1e-10, 1e-10));
        assert_eq!(tolerance(DType::I32), (0.0, 0.0));
        assert_eq!(tolerance(DType::Bool), (0.0, 0.0));
        // fp8 tolerances cover one ulp of a value in [1, 2).
        for d in [DType::F8E4M3, DType::F8E5M2] {
            let (atol, rtol) = tolerance(d);
            let one_ulp = 2.0 * d.unit_roundoff().unwrap_or(1.0);
            assert!(atol >= one_ulp && rtol >= one_ulp, "{d}");
        }
    }

    #[test]
    fn params_defaults_kinds_and_size_checks() {
        let c = call(
            "b",
            &[
                ("flag", CallArg::Bool(true)),
                ("one", CallArg::Int(1)),
                ("eps", CallArg::Float(0.5)),
                ("name", CallArg::Str("x".into())),
                ("M", CallArg::Int(4)),
            ],
        );
        let p = Params { call: Some(&c) };
        assert_eq!(p.flag("flag", false), Ok(true));
        assert_eq!(p.flag("one", false), Ok(true));
        assert_eq!(p.flag("absent", true), Ok(true));
        assert!(p.flag("name", false).is_err());
        assert_eq!(p.float("eps", 1.0), Ok(0.5));
        assert_eq!(p.float("one", 0.0), Ok(1.0));
        assert!(p.float("flag", 0.0).is_err());
        assert_eq!(p.check_size("M", 4), Ok(()));
        assert!(p.check_size("M", 5).is_err());
        assert_eq!(p.check_size("N", 5), Ok(()));
        let none = Params { call: None };
        assert_eq!(none.flag("flag", false), Ok(false));
        assert_eq!(none.float("eps", 2.0), Ok(2.0));
    }

    #[test]
    fn values_checks_element_count() {
        let bad = tensor(DType::F32, &[2, 2], &[1.0, 2.0, 3.0]);
        assert!(values(&bad, "X").is_err());
        let ints = Tensor {
            dtype: DType::I32,
            shape: vec![2],
            data: TensorData::Int(vec![-3, 7]),
        };
        assert_eq!(values(&ints, "X"), Ok(vec![-3.0, 7.0]));
    }

    #[test]
    fn output_rounds_to_the_dtype() {
        let f16 = output(
            &poisoned(DType::F16, &[2]),
            vec![1.0 + 2f64.powi(-12), 1.0 / 3.0],
        );
        assert_eq!(
            f16.data,
            TensorData::Float(vec![1.0, DType::F16.round_f64(1.0 / 3.0)])
        );
        let like = Tensor {
            dtype: DType::I8,
            shape: vec![2],
            data: TensorData::Int(vec![0, 0]),
        };
        assert_eq!(
            output(&like, vec![200.0, -2.7]).data,
            TensorData::Int(vec![-56, -2])
        );
    }
}
