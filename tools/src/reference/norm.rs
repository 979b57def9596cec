//! References for the normalisation examples: `rmsnorm` and `layernorm`,
//! both over the last axis of an (M, N) input.

use super::{Outputs, Params, check_arity, dims, output, require_shape, values};
use tilec_core::interp::Tensor;

/// The default `eps` of `rmsnorm` in `examples/rmsnorm.py`.
const RMSNORM_EPS: f64 = 1e-6;
/// The default `eps` of `layernorm` in `examples/layernorm.py`.
const LAYERNORM_EPS: f64 = 1e-5;

/// Checks `X (M, N)`, the per-column vectors named in `vectors` (each
/// `(N,)`) and `Y (M, N)`, and returns (M, N).
fn check_shapes(
    params: &Params,
    args: &[Tensor],
    vectors: &[&str],
) -> Result<(usize, usize), String> {
    let mut names = vec!["X"];
    names.extend_from_slice(vectors);
    names.push("Y");
    check_arity(args, &names)?;
    let [m, n] = dims::<2>(&args[0], "X")?;
    for (i, name) in vectors.iter().enumerate() {
        require_shape(&args[i + 1], name, &[n])?;
    }
    require_shape(&args[vectors.len() + 1], "Y", &[m, n])?;
    params.check_sizes(&[("M", m), ("N", n)])?;
    Ok((m, n))
}

/// `rmsnorm(M, N, ..., eps)`: parameters `X (M, N), W (N,), Y (M, N)`;
/// writes `Y = X / sqrt(mean(X², axis=-1) + eps) * W`.
pub(super) fn rmsnorm(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    let (_, n) = check_shapes(params, args, &["W"])?;
    let eps = params.float("eps", RMSNORM_EPS)?;
    let mut y = values(&args[0], "X")?;
    let w = values(&args[1], "W")?;
    if n > 0 {
        for row in y.chunks_mut(n) {
            let mean_sq = row.iter().map(|x| x * x).sum::<f64>() / n as f64;
            let inv_rms = 1.0 / (mean_sq + eps).sqrt();
            for (x, w) in row.iter_mut().zip(&w) {
                *x *= inv_rms * w;
            }
        }
    }
    Ok(vec![(2, output(&args[2], y))])
}

/// `layernorm(M, N, ..., eps)`: parameters `X (M, N), gamma (N,), beta (N,),
/// Y (M, N)`; writes `Y = (X - mean) / sqrt(var + eps) * gamma + beta` with
/// the mean and the biased variance of each row.
pub(super) fn layernorm(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    let (_, n) = check_shapes(params, args, &["gamma", "beta"])?;
    let eps = params.float("eps", LAYERNORM_EPS)?;
    let mut y = values(&args[0], "X")?;
    let gamma = values(&args[1], "gamma")?;
    let beta = values(&args[2], "beta")?;
    if n > 0 {
        for row in y.chunks_mut(n) {
            let mean = row.iter().sum::<f64>() / n as f64;
            let var = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            let inv_std = 1.0 / (var + eps).sqrt();
            for ((x, g), b) in row.iter_mut().zip(&gamma).zip(&beta) {
                *x = (*x - mean) * inv_std * g + b;
            }
        }
    }
    Ok(vec![(3, output(&args[3], y))])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use tilec_core::front::py::CallArg;
    use tilec_core::ir::DType;

    const F: DType = DType::F64;

    #[test]
    fn rmsnorm_3_4() -> Result<(), String> {
        // mean(x²) = (9 + 16) / 2 = 12.5; y = x / sqrt(12.5) * w.
        let no_eps = call("rmsnorm", &[("eps", CallArg::Float(0.0))]);
        let x = tensor(F, &[1, 2], &[3.0, 4.0]);
        let w = tensor(F, &[2], &[1.0, 2.0]);
        let out = single(
            run("rmsnorm", Some(&no_eps), &[x, w, poisoned(F, &[1, 2])])?,
            2,
        )?;
        let r = 12.5f64.sqrt();
        assert_close(&out, &[3.0 / r, 8.0 / r], 1e-15)
    }

    #[test]
    fn rmsnorm_uses_eps() -> Result<(), String> {
        // A zero row stays zero thanks to eps; with eps = 3 the row [1, 1]
        // has mean square 1 and scale 1 / sqrt(4) = 1/2.
        let x = tensor(F, &[2, 2], &[0.0, 0.0, 1.0, 1.0]);
        let w = tensor(F, &[2], &[1.0, 1.0]);
        let eps3 = call("rmsnorm", &[("eps", CallArg::Int(3))]);
        let out = single(
            run(
                "rmsnorm",
                Some(&eps3),
                &[x.clone(), w.clone(), poisoned(F, &[2, 2])],
            )?,
            2,
        )?;
        assert_close(&out, &[0.0, 0.0, 0.5, 0.5], 1e-15)?;
        // The default eps (1e-6) is applied without a call.
        let out = single(run("rmsnorm", None, &[x, w, poisoned(F, &[2, 2])])?, 2)?;
        let s = 1.0 / (1.0f64 + 1e-6).sqrt();
        assert_close(&out, &[0.0, 0.0, s, s], 1e-15)
    }

    #[test]
    fn rmsnorm_rejects_bad_weight() {
        let x = tensor(F, &[1, 2], &[0.0; 2]);
        let w = tensor(F, &[1, 2], &[0.0; 2]);
        assert!(run("rmsnorm", None, &[x, w, poisoned(F, &[1, 2])]).is_err());
    }

    #[test]
    fn layernorm_1_3() -> Result<(), String> {
        // mean 2, biased variance 1: normalised [-1, 1], then * gamma + beta.
        let no_eps = call("layernorm", &[("eps", CallArg::Float(0.0))]);
        let x = tensor(F, &[1, 2], &[1.0, 3.0]);
        let gamma = tensor(F, &[2], &[1.0, 2.0]);
        let beta = tensor(F, &[2], &[0.0, 1.0]);
        let out = single(
            run(
                "layernorm",
                Some(&no_eps),
                &[x, gamma, beta, poisoned(F, &[1, 2])],
            )?,
            3,
        )?;
        assert_close(&out, &[-1.0, 3.0], 1e-15)
    }

    #[test]
    fn layernorm_default_eps_and_errors() -> Result<(), String> {
        // Variance 1 with the default eps 1e-5.
        let x = tensor(F, &[1, 2], &[-1.0, 1.0]);
        let ones = tensor(F, &[2], &[1.0, 1.0]);
        let zeros = tensor(F, &[2], &[0.0, 0.0]);
        let out = single(
            run(
                "layernorm",
                None,
                &[x.clone(), ones.clone(), zeros.clone(), poisoned(F, &[1, 2])],
            )?,
            3,
        )?;
        let s = 1.0 / (1.0f64 + 1e-5).sqrt();
        assert_close(&out, &[-s, s], 1e-15)?;
        assert!(
            run(
                "layernorm",
                None,
                &[x.clone(), ones.clone(), poisoned(F, &[1, 2])]
            )
            .is_err()
        );
        let bad_eps = call("layernorm", &[("eps", CallArg::Str("small".into()))]);
        assert!(
            run(
                "layernorm",
                Some(&bad_eps),
                &[x, ones, zeros, poisoned(F, &[1, 2])]
            )
            .is_err()
        );
        Ok(())
    }
}
