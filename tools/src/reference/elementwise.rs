//! References for the elementwise examples: `elementwise_add` (`C = A + B`)
//! and `guarded_copy` (`B = A`, whichever threads load the tile).

use super::{Outputs, Params, check_arity, dims, output, require_shape, values};
use tilec_core::interp::Tensor;

/// `elementwise_add(M, N, ...)`: parameters `A, B, C`, all (M, N); writes C.
pub(super) fn add(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "B", "C"])?;
    let [m, n] = dims::<2>(&args[0], "A")?;
    require_shape(&args[1], "B", &[m, n])?;
    require_shape(&args[2], "C", &[m, n])?;
    params.check_sizes(&[("M", m), ("N", n)])?;
    let a = values(&args[0], "A")?;
    let b = values(&args[1], "B")?;
    let c = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Ok(vec![(2, output(&args[2], c))])
}

/// `guarded_copy(M, N, ...)`: parameters `A, B`, both (M, N); writes B, an
/// exact copy of A.
pub(super) fn copy(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "B"])?;
    let [m, n] = dims::<2>(&args[0], "A")?;
    require_shape(&args[1], "B", &[m, n])?;
    params.check_sizes(&[("M", m), ("N", n)])?;
    Ok(vec![(1, output(&args[1], values(&args[0], "A")?))])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use tilec_core::front::py::CallArg;
    use tilec_core::ir::DType;

    #[test]
    fn adds_and_rounds_once() -> Result<(), String> {
        let a = tensor(DType::F16, &[2, 2], &[1.0, 2.0, -3.0, 1.0]);
        let b = tensor(DType::F16, &[2, 2], &[0.5, -2.0, 0.25, 2f64.powi(-11)]);
        let out = single(
            run(
                "elementwise_add",
                None,
                &[a, b, poisoned(DType::F16, &[2, 2])],
            )?,
            2,
        )?;
        // 1 + 2^-11 is a tie between two f16 neighbours: it rounds to even, 1.
        assert_close(&out, &[1.5, 0.0, -2.75, 1.0], 0.0)?;
        assert_eq!(out.dtype, DType::F16);
        Ok(())
    }

    #[test]
    fn copy_is_exact() -> Result<(), String> {
        let a = tensor(DType::F16, &[1, 3], &[1.5, -0.0, 65504.0]);
        let out = single(
            run("guarded_copy", None, &[a, poisoned(DType::F16, &[1, 3])])?,
            1,
        )?;
        assert_close(&out, &[1.5, 0.0, 65504.0], 0.0)?;
        let b = poisoned(DType::F16, &[3, 1]);
        let a = tensor(DType::F16, &[1, 3], &[1.0, 2.0, 3.0]);
        assert!(run("guarded_copy", None, &[a, b]).is_err());
        Ok(())
    }

    #[test]
    fn rejects_mismatched_shapes_and_sizes() {
        let a = tensor(DType::F32, &[1, 2], &[1.0, 2.0]);
        let b = tensor(DType::F32, &[2, 1], &[1.0, 2.0]);
        let c = poisoned(DType::F32, &[1, 2]);
        assert!(run("elementwise_add", None, &[a.clone(), b, c.clone()]).is_err());
        assert!(run("elementwise_add", None, &[a.clone(), c.clone()]).is_err());
        let wrong_m = call("elementwise_add", &[("M", CallArg::Int(3))]);
        assert!(run("elementwise_add", Some(&wrong_m), &[a.clone(), a, c]).is_err());
    }
}
