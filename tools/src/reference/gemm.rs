//! References for the matrix-product examples: `gemm` (with `trans_A` /
//! `trans_B`), `gemm_bias_relu`, `gemm_splitk` and `gemv`.

use super::{Outputs, Params, check_arity, dims, output, require_shape, values};
use tilec_core::interp::Tensor;

/// The (m, n) product of `a(i, k)` and `b(k, j)` summed over `k` in f64,
/// row-major.
fn product(
    (m, n, k): (usize, usize, usize),
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
) -> Vec<f64> {
    let mut c = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            c.push((0..k).map(|kk| a(i, kk) * b(kk, j)).sum());
        }
    }
    c
}

/// Sizes and elements of a plain (untransposed) `A (M, K) @ B (K, N)`.
#[derive(Debug)]
struct Operands {
    m: usize,
    n: usize,
    k: usize,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Operands {
    /// Reads and checks `A` and `B`, the first two parameters.
    fn read(params: &Params, args: &[Tensor]) -> Result<Operands, String> {
        let [m, k] = dims::<2>(&args[0], "A")?;
        let [kb, n] = dims::<2>(&args[1], "B")?;
        if kb != k {
            return Err(format!(
                "A is {:?} and B is {:?}: their K sizes differ",
                args[0].shape, args[1].shape
            ));
        }
        params.check_sizes(&[("M", m), ("N", n), ("K", k)])?;
        Ok(Operands {
            m,
            n,
            k,
            a: values(&args[0], "A")?,
            b: values(&args[1], "B")?,
        })
    }

    /// `A @ B`, (M, N) row-major.
    fn product(&self) -> Vec<f64> {
        let (n, k) = (self.n, self.k);
        product(
            (self.m, n, k),
            |i, kk| self.a[i * k + kk],
            |kk, j| self.b[kk * n + j],
        )
    }
}

/// `matmul(M, N, K, ..., trans_A, trans_B, ...)`: parameters `A, B, C`, with
/// A (K, M) when trans_A else (M, K), B (N, K) when trans_B else (K, N),
/// C (M, N); writes `C = op(A) @ op(B)`.
pub(super) fn matmul(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "B", "C"])?;
    let trans_a = params.flag("trans_A", false)?;
    let trans_b = params.flag("trans_B", false)?;
    let [a0, a1] = dims::<2>(&args[0], "A")?;
    let (m, k) = if trans_a { (a1, a0) } else { (a0, a1) };
    let [b0, b1] = dims::<2>(&args[1], "B")?;
    let (kb, n) = if trans_b { (b1, b0) } else { (b0, b1) };
    if kb != k {
        return Err(format!(
            "A is {:?} (trans_A = {trans_a}) and B is {:?} (trans_B = {trans_b}): \
             their K sizes differ",
            args[0].shape, args[1].shape
        ));
    }
    require_shape(&args[2], "C", &[m, n])?;
    params.check_sizes(&[("M", m), ("N", n), ("K", k)])?;
    let a = values(&args[0], "A")?;
    let b = values(&args[1], "B")?;
    let c = product(
        (m, n, k),
        |i, kk| {
            if trans_a {
                a[kk * m + i]
            } else {
                a[i * k + kk]
            }
        },
        |kk, j| {
            if trans_b {
                b[j * k + kk]
            } else {
                b[kk * n + j]
            }
        },
    );
    Ok(vec![(2, output(&args[2], c))])
}

/// `matmul_bias_relu(M, N, K, ...)`: parameters `A (M, K), B (K, N),
/// bias (N,), C (M, N)`; writes `C = relu(A @ B + bias)`.
pub(super) fn matmul_bias_relu(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "B", "bias", "C"])?;
    let ops = Operands::read(params, args)?;
    let n = ops.n;
    require_shape(&args[2], "bias", &[n])?;
    require_shape(&args[3], "C", &[ops.m, n])?;
    let bias = values(&args[2], "bias")?;
    let mut c = ops.product();
    for (idx, x) in c.iter_mut().enumerate() {
        *x = (*x + bias[idx % n]).max(0.0);
    }
    Ok(vec![(3, output(&args[3], c))])
}

/// `matmul_splitk(M, N, K, ...)`: parameters `A (M, K), B (K, N), C (M, N)`;
/// C is read and written in place: `C = C_initial + A @ B` (how K is split
/// does not change the sum).
pub(super) fn matmul_splitk(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "B", "C"])?;
    let ops = Operands::read(params, args)?;
    require_shape(&args[2], "C", &[ops.m, ops.n])?;
    let initial = values(&args[2], "C")?;
    let mut c = ops.product();
    for (x, c0) in c.iter_mut().zip(initial) {
        *x += c0;
    }
    Ok(vec![(2, output(&args[2], c))])
}

/// `gemv(N, K, ...)`: parameters `A (N, K), x (K,), y (N,)`; writes `y = A @ x`.
pub(super) fn gemv(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    check_arity(args, &["A", "x", "y"])?;
    let [n, k] = dims::<2>(&args[0], "A")?;
    require_shape(&args[1], "x", &[k])?;
    require_shape(&args[2], "y", &[n])?;
    params.check_sizes(&[("N", n), ("K", k)])?;
    let a = values(&args[0], "A")?;
    let x = values(&args[1], "x")?;
    let y = product((n, 1, k), |i, kk| a[i * k + kk], |kk, _| x[kk]);
    Ok(vec![(2, output(&args[2], y))])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use tilec_core::front::py::CallArg;
    use tilec_core::ir::DType;

    const F: DType = DType::F32;

    #[test]
    fn gemm_2x2() -> Result<(), String> {
        let a = tensor(F, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = tensor(F, &[2, 2], &[5.0, 6.0, 7.0, 8.0]);
        let out = single(run("gemm", None, &[a, b, poisoned(F, &[2, 2])])?, 2)?;
        assert_close(&out, &[19.0, 22.0, 43.0, 50.0], 0.0)
    }

    #[test]
    fn gemm_2x2_transposed_operands() -> Result<(), String> {
        // The same product as gemm_2x2 with the operands stored transposed:
        // A^T = [[1, 3], [2, 4]], B^T = [[5, 7], [6, 8]].
        let both = call(
            "matmul",
            &[
                ("trans_A", CallArg::Bool(true)),
                ("trans_B", CallArg::Bool(true)),
            ],
        );
        let a = tensor(F, &[2, 2], &[1.0, 3.0, 2.0, 4.0]);
        let b = tensor(F, &[2, 2], &[5.0, 7.0, 6.0, 8.0]);
        let out = single(run("gemm", Some(&both), &[a, b, poisoned(F, &[2, 2])])?, 2)?;
        assert_close(&out, &[19.0, 22.0, 43.0, 50.0], 0.0)
    }

    #[test]
    fn gemm_rectangular_and_transposed() -> Result<(), String> {
        // A (2, 3) @ B (3, 1) = [1·1 + 2·2 + 3·3, 4·1 + 5·2 + 6·3] = [14, 32].
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let a_t = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
        let b = [1.0, 2.0, 3.0];
        for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
            let c = call(
                "matmul",
                &[
                    ("M", CallArg::Int(2)),
                    ("N", CallArg::Int(1)),
                    ("K", CallArg::Int(3)),
                    ("trans_A", CallArg::Bool(trans_a)),
                    ("trans_B", CallArg::Bool(trans_b)),
                ],
            );
            let a = if trans_a {
                tensor(F, &[3, 2], &a_t)
            } else {
                tensor(F, &[2, 3], &a)
            };
            let b = if trans_b {
                tensor(F, &[1, 3], &b)
            } else {
                tensor(F, &[3, 1], &b)
            };
            let out = single(run("gemm", Some(&c), &[a, b, poisoned(F, &[2, 1])])?, 2)?;
            assert_close(&out, &[14.0, 32.0], 0.0)
                .map_err(|e| format!("trans_A={trans_a} trans_B={trans_b}: {e}"))?;
        }
        Ok(())
    }

    #[test]
    fn gemm_rejects_bad_shapes() {
        let a = tensor(F, &[2, 3], &[0.0; 6]);
        let b = tensor(F, &[2, 2], &[0.0; 4]);
        assert!(run("gemm", None, &[a.clone(), b, poisoned(F, &[2, 2])]).is_err());
        let b = tensor(F, &[3, 2], &[0.0; 6]);
        assert!(run("gemm", None, &[a.clone(), b.clone(), poisoned(F, &[3, 2])]).is_err());
        // Shapes fit as given, but the call says B is transposed.
        let t = call("matmul", &[("trans_B", CallArg::Bool(true))]);
        assert!(
            run(
                "gemm",
                Some(&t),
                &[a.clone(), b.clone(), poisoned(F, &[2, 2])]
            )
            .is_err()
        );
        let wrong_k = call("matmul", &[("K", CallArg::Int(4))]);
        assert!(run("gemm", Some(&wrong_k), &[a, b, poisoned(F, &[2, 2])]).is_err());
    }

    #[test]
    fn gemm_rounds_to_the_output_dtype() -> Result<(), String> {
        // 1 · (1 + 2^-11) + 2^-12 = 1 + 3·2^-12 rounds to 1 + 2^-10 in f16,
        // though each term alone would round to 1 (the kernel accumulates
        // in f32, so only the final sum is rounded).
        let a = tensor(DType::F16, &[1, 2], &[1.0, 2f64.powi(-12)]);
        let b = tensor(DType::F32, &[2, 1], &[1.0 + 2f64.powi(-11), 1.0]);
        let out = single(
            run("gemm", None, &[a, b, poisoned(DType::F16, &[1, 1])])?,
            2,
        )?;
        assert_close(&out, &[1.0 + 2f64.powi(-10)], 0.0)
    }

    #[test]
    fn bias_relu() -> Result<(), String> {
        // A @ I = A; + bias [-2, 1]: [[1-2, 2+1], [3-2, -4+1]] → relu.
        let a = tensor(F, &[2, 2], &[1.0, 2.0, 3.0, -4.0]);
        let b = tensor(F, &[2, 2], &[1.0, 0.0, 0.0, 1.0]);
        let bias = tensor(F, &[2], &[-2.0, 1.0]);
        let out = single(
            run("gemm_bias_relu", None, &[a, b, bias, poisoned(F, &[2, 2])])?,
            3,
        )?;
        assert_close(&out, &[0.0, 3.0, 1.0, 0.0], 0.0)
    }

    #[test]
    fn bias_relu_rejects_bad_bias() {
        let a = tensor(F, &[2, 2], &[0.0; 4]);
        let bias = tensor(F, &[3], &[0.0; 3]);
        assert!(
            run(
                "gemm_bias_relu",
                None,
                &[a.clone(), a, bias, poisoned(F, &[2, 2])]
            )
            .is_err()
        );
    }

    #[test]
    fn splitk_accumulates_onto_c() -> Result<(), String> {
        let a = tensor(DType::F16, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = tensor(DType::F16, &[2, 2], &[5.0, 6.0, 7.0, 8.0]);
        let c = tensor(F, &[2, 2], &[1.0, -1.0, 0.5, 100.0]);
        let out = single(run("gemm_splitk", None, &[a, b, c])?, 2)?;
        assert_eq!(out.dtype, F);
        assert_close(&out, &[20.0, 21.0, 43.5, 150.0], 0.0)
    }

    #[test]
    fn gemv_2x2() -> Result<(), String> {
        let a = tensor(F, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let x = tensor(F, &[3], &[1.0, -1.0, 2.0]);
        let out = single(run("gemv", None, &[a, x, poisoned(F, &[2])])?, 2)?;
        assert_close(&out, &[5.0, 11.0], 0.0)
    }

    #[test]
    fn gemv_rejects_bad_x() {
        let a = tensor(F, &[2, 3], &[0.0; 6]);
        let x = tensor(F, &[2], &[0.0; 2]);
        assert!(run("gemv", None, &[a, x, poisoned(F, &[2])]).is_err());
    }
}
