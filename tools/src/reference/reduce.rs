//! References for the row-reduction examples: `softmax` (row softmax) and
//! `row_reduce` (row sums and row maxima).

use super::{Outputs, Params, check_arity, dims, output, require_shape, values};
use tilec_core::interp::Tensor;

/// `exp(x - max) / sum(exp(x - max))` of one row, written over `row`.
/// Subtracting the maximum changes nothing mathematically and keeps `exp`
/// finite; a row whose maximum is not finite is left to IEEE arithmetic.
pub(super) fn softmax_row(row: &mut [f64]) {
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let shift = if max.is_finite() { max } else { 0.0 };
    for x in row.iter_mut() {
        *x = (*x - shift).exp();
    }
    let sum: f64 = row.iter().sum();
    for x in row.iter_mut() {
        *x /= sum;
    }
}

/// `softmax(M, N, ...)`: parameters `X (M, N), Y (M, N)`; writes
/// `Y[i, :] = softmax(X[i, :])`.
pub(super) fn softmax(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["X", "Y"])?;
    let [m, n] = dims::<2>(&args[0], "X")?;
    require_shape(&args[1], "Y", &[m, n])?;
    params.check_sizes(&[("M", m), ("N", n)])?;
    let mut y = values(&args[0], "X")?;
    if n > 0 {
        y.chunks_mut(n).for_each(softmax_row);
    }
    Ok(vec![(1, output(&args[1], y))])
}

/// `row_reduce(M, N, ...)`: parameters `X (M, N), row_sum (M,), row_max (M,)`;
/// writes both outputs. The maximum of an empty row is -inf (the identity
/// of max, as `T.reduce_max` starts from it).
pub(super) fn row_reduce(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["X", "row_sum", "row_max"])?;
    let [m, n] = dims::<2>(&args[0], "X")?;
    require_shape(&args[1], "row_sum", &[m])?;
    require_shape(&args[2], "row_max", &[m])?;
    params.check_sizes(&[("M", m), ("N", n)])?;
    let x = values(&args[0], "X")?;
    let rows = (0..m).map(|i| &x[i * n..(i + 1) * n]);
    let sums = rows.clone().map(|r| r.iter().sum()).collect();
    let maxes = rows
        .map(|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .collect();
    Ok(vec![
        (1, output(&args[1], sums)),
        (2, output(&args[2], maxes)),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use tilec_core::front::py::CallArg;
    use tilec_core::ir::DType;

    #[test]
    fn softmax_of_zero_and_ln2_is_a_third_and_two_thirds() -> Result<(), String> {
        let x = tensor(DType::F64, &[1, 2], &[0.0, 2f64.ln()]);
        let out = single(
            run("softmax", None, &[x, poisoned(DType::F64, &[1, 2])])?,
            1,
        )?;
        assert_close(&out, &[1.0 / 3.0, 2.0 / 3.0], 1e-15)
    }

    #[test]
    fn softmax_rows_are_independent_and_shift_invariant() -> Result<(), String> {
        // Row 1 is row 0 shifted by 1000: exp would overflow without the
        // max subtraction, the softmax is the same.
        let x = tensor(
            DType::F32,
            &[2, 3],
            &[0.0, 0.0, 0.0, 1000.0, 1000.0, 1000.0],
        );
        let out = single(
            run("softmax", None, &[x, poisoned(DType::F32, &[2, 3])])?,
            1,
        )?;
        let third = DType::F32.round_f64(1.0 / 3.0);
        assert_close(&out, &[third; 6], 0.0)
    }

    #[test]
    fn softmax_rejects_bad_output_and_sizes() {
        let x = tensor(DType::F32, &[1, 2], &[0.0; 2]);
        assert!(run("softmax", None, &[x.clone(), poisoned(DType::F32, &[2, 1])]).is_err());
        let wrong_n = call("softmax", &[("N", CallArg::Int(3))]);
        assert!(
            run(
                "softmax",
                Some(&wrong_n),
                &[x, poisoned(DType::F32, &[1, 2])]
            )
            .is_err()
        );
    }

    #[test]
    fn row_sums_and_maxima() -> Result<(), String> {
        let x = tensor(DType::F32, &[2, 3], &[1.0, -2.0, 3.0, -5.0, -1.0, -4.0]);
        let outs = run(
            "row_reduce",
            None,
            &[x, poisoned(DType::F32, &[2]), poisoned(DType::F32, &[2])],
        )?;
        let [(1, sums), (2, maxes)] =
            <[_; 2]>::try_from(outs).map_err(|v| format!("{} outputs", v.len()))?
        else {
            return Err("outputs should be parameters 1 and 2".into());
        };
        assert_close(&sums, &[2.0, -10.0], 0.0)?;
        assert_close(&maxes, &[3.0, -1.0], 0.0)
    }

    #[test]
    fn row_reduce_rejects_bad_outputs() {
        let x = tensor(DType::F32, &[2, 3], &[0.0; 6]);
        let two = poisoned(DType::F32, &[2]);
        let three = poisoned(DType::F32, &[3]);
        assert!(run("row_reduce", None, &[x.clone(), two.clone(), three]).is_err());
        assert!(run("row_reduce", None, &[x, two]).is_err());
    }
}
