//! References for the attention examples: `flash_attention` and
//! `flash_attention_gqa`, both in the (batch, heads, seq_len, dim) layout.
//!
//! `Output[b, h, i, :] = softmax_j(Q[b, h, i, :] · K[b, g, j, :] / sqrt(dim))
//! · V[b, g, j, :]`, where g = h / (heads / kv_heads) is the key/value head
//! of query head h (g = h without grouping) and j runs over all keys, or over
//! j <= i when causal. The kernels' online softmax, exp2 form and block
//! masking are implementation strategies for this formula; the reference
//! evaluates the formula directly, one query row at a time.

use super::reduce::softmax_row;
use super::{Outputs, Params, check_arity, dims, output, require_shape, values};
use tilec_core::interp::Tensor;

/// Sizes of an attention problem.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    batch: usize,
    heads: usize,
    kv_heads: usize,
    seq_len: usize,
    dim: usize,
}

/// The attention output (batch, heads, seq_len, dim), row-major.
fn attention(sizes: Sizes, q: &[f64], k: &[f64], v: &[f64], is_causal: bool) -> Vec<f64> {
    let Sizes {
        batch,
        heads,
        kv_heads,
        seq_len,
        dim,
    } = sizes;
    // Callers check kv_heads > 0 and heads % kv_heads == 0.
    let groups = heads / kv_heads;
    let scale = 1.0 / (dim as f64).sqrt();
    // Offsets of row i of head h of batch b in Q / Output and in K / V.
    let q_row = |b: usize, h: usize, i: usize| ((b * heads + h) * seq_len + i) * dim;
    let kv_row = |b: usize, g: usize, j: usize| ((b * kv_heads + g) * seq_len + j) * dim;
    let mut out = vec![0.0; batch * heads * seq_len * dim];
    let mut scores = Vec::with_capacity(seq_len);
    for b in 0..batch {
        for h in 0..heads {
            let g = h / groups;
            for i in 0..seq_len {
                let qi = &q[q_row(b, h, i)..][..dim];
                let visible = if is_causal { i + 1 } else { seq_len };
                scores.clear();
                scores.extend((0..visible).map(|j| {
                    let kj = &k[kv_row(b, g, j)..][..dim];
                    qi.iter().zip(kj).map(|(x, y)| x * y).sum::<f64>() * scale
                }));
                softmax_row(&mut scores);
                let o = &mut out[q_row(b, h, i)..][..dim];
                for (j, p) in scores.iter().enumerate() {
                    let vj = &v[kv_row(b, g, j)..][..dim];
                    for (o, x) in o.iter_mut().zip(vj) {
                        *o += p * x;
                    }
                }
            }
        }
    }
    out
}

/// Checks `Q, K, V, Output` (Q and Output (batch, heads, seq_len, dim), K and
/// V (batch, kv_heads, seq_len, dim)) and the call's sizes, and returns them.
fn check_shapes(params: &Params, args: &[Tensor]) -> Result<Sizes, String> {
    check_arity(args, &["Q", "K", "V", "Output"])?;
    let [batch, heads, seq_len, dim] = dims::<4>(&args[0], "Q")?;
    let [_, kv_heads, _, _] = dims::<4>(&args[1], "K")?;
    require_shape(&args[1], "K", &[batch, kv_heads, seq_len, dim])?;
    require_shape(&args[2], "V", &[batch, kv_heads, seq_len, dim])?;
    require_shape(&args[3], "Output", &[batch, heads, seq_len, dim])?;
    if kv_heads == 0 || heads % kv_heads != 0 {
        return Err(format!(
            "Q has {heads} heads, which K's {kv_heads} heads do not divide"
        ));
    }
    params.check_sizes(&[
        ("batch", batch),
        ("heads", heads),
        ("kv_heads", kv_heads),
        ("seq_len", seq_len),
        ("dim", dim),
    ])?;
    Ok(Sizes {
        batch,
        heads,
        kv_heads,
        seq_len,
        dim,
    })
}

/// Evaluates attention over checked arguments and returns `Output` (index 3).
fn evaluate(sizes: Sizes, args: &[Tensor], is_causal: bool) -> Result<Outputs, String> {
    let q = values(&args[0], "Q")?;
    let k = values(&args[1], "K")?;
    let v = values(&args[2], "V")?;
    let o = attention(sizes, &q, &k, &v, is_causal);
    Ok(vec![(3, output(&args[3], o))])
}

/// `flash_attention(batch, heads, seq_len, dim, is_causal=False, ...)`:
/// parameters `Q, K, V, Output`, all (batch, heads, seq_len, dim).
pub(super) fn flash_attention(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    let sizes = check_shapes(params, args)?;
    if sizes.kv_heads != sizes.heads {
        return Err(format!(
            "Q has {} heads but K has {}; flash_attention needs the same number \
             (flash_attention_gqa shares key/value heads)",
            sizes.heads, sizes.kv_heads
        ));
    }
    let is_causal = params.flag("is_causal", false)?;
    evaluate(sizes, args, is_causal)
}

/// `flash_attention_gqa(batch, heads, kv_heads, seq_len, dim, is_causal=True,
/// ...)`: parameters `Q, K, V, Output`; K and V have kv_heads heads.
pub(super) fn flash_attention_gqa(params: &Params, args: &[Tensor]) -> Result<Outputs, String> {
    let sizes = check_shapes(params, args)?;
    let is_causal = params.flag("is_causal", true)?;
    evaluate(sizes, args, is_causal)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use tilec_core::front::py::CallArg;
    use tilec_core::ir::DType;

    const F: DType = DType::F64;

    /// Two tokens, dim 1: q = [0, 1], k = [0, ln 4], v = [1, 6]. Scores of
    /// query 0 are [0, 0]; of query 1, [0, ln 4] (softmax [1/5, 4/5]).
    fn two_tokens() -> [tilec_core::interp::Tensor; 4] {
        [
            tensor(F, &[1, 1, 2, 1], &[0.0, 1.0]),
            tensor(F, &[1, 1, 2, 1], &[0.0, 4f64.ln()]),
            tensor(F, &[1, 1, 2, 1], &[1.0, 6.0]),
            poisoned(F, &[1, 1, 2, 1]),
        ]
    }

    #[test]
    fn non_causal_two_tokens() -> Result<(), String> {
        let out = single(run("flash_attention", None, &two_tokens())?, 3)?;
        // Query 0: mean of v = 3.5; query 1: 1/5 · 1 + 4/5 · 6 = 5.
        assert_close(&out, &[3.5, 5.0], 1e-12)
    }

    #[test]
    fn causal_mask_of_two_tokens() -> Result<(), String> {
        let causal = call("flash_attention", &[("is_causal", CallArg::Bool(true))]);
        let out = single(run("flash_attention", Some(&causal), &two_tokens())?, 3)?;
        // Query 0 sees key 0 only: v[0] = 1. Query 1 sees both keys.
        assert_close(&out, &[1.0, 5.0], 1e-12)
    }

    #[test]
    fn scale_is_one_over_sqrt_dim() -> Result<(), String> {
        // dim 4, queries (1, 1, 1, 1) and keys 0 and c·(1, 1, 1, 1) with
        // c = ln 3 / 2: scores [0, 4c / sqrt 4] = [0, ln 3] → softmax [1/4, 3/4]
        // (a scale of 1/dim would give [0, ln 3 / 2] instead).
        let c = 3f64.ln() / 2.0;
        let q = tensor(F, &[1, 1, 2, 4], &[1.0; 8]);
        let k = tensor(F, &[1, 1, 2, 4], &[0.0, 0.0, 0.0, 0.0, c, c, c, c]);
        let v = tensor(F, &[1, 1, 2, 4], &[0.0, 0.0, 0.0, 0.0, 4.0, 8.0, -4.0, 0.0]);
        let out = single(
            run(
                "flash_attention",
                None,
                &[q, k, v, poisoned(F, &[1, 1, 2, 4])],
            )?,
            3,
        )?;
        assert_close(&out, &[3.0, 6.0, -3.0, 0.0, 3.0, 6.0, -3.0, 0.0], 1e-12)
    }

    #[test]
    fn heads_and_batches_are_independent() -> Result<(), String> {
        // batch 2, heads 2, one token: the output is that head's v row.
        let q = tensor(F, &[2, 2, 1, 1], &[1.0, 2.0, 3.0, 4.0]);
        let v = tensor(F, &[2, 2, 1, 1], &[10.0, 20.0, 30.0, 40.0]);
        let out = single(
            run(
                "flash_attention",
                None,
                &[q.clone(), q, v, poisoned(F, &[2, 2, 1, 1])],
            )?,
            3,
        )?;
        assert_close(&out, &[10.0, 20.0, 30.0, 40.0], 0.0)
    }

    #[test]
    fn flash_attention_rejects_grouped_kv_and_bad_sizes() {
        let q = poisoned(F, &[1, 2, 2, 1]);
        let kv = poisoned(F, &[1, 1, 2, 1]);
        assert!(
            run(
                "flash_attention",
                None,
                &[q.clone(), kv.clone(), kv, q.clone()]
            )
            .is_err()
        );
        let wrong = call("flash_attention", &[("seq_len", CallArg::Int(3))]);
        assert!(
            run(
                "flash_attention",
                Some(&wrong),
                &[q.clone(), q.clone(), q.clone(), q]
            )
            .is_err()
        );
    }

    #[test]
    fn gqa_maps_query_heads_to_kv_heads() -> Result<(), String> {
        // heads 4, kv_heads 2, one token: query heads 0, 1 read kv head 0
        // and heads 2, 3 read kv head 1.
        let q = tensor(F, &[1, 4, 1, 1], &[1.0, 2.0, 3.0, 4.0]);
        let k = tensor(F, &[1, 2, 1, 1], &[1.0, 1.0]);
        let v = tensor(F, &[1, 2, 1, 1], &[10.0, 20.0]);
        let out = single(
            run(
                "flash_attention_gqa",
                None,
                &[q, k, v, poisoned(F, &[1, 4, 1, 1])],
            )?,
            3,
        )?;
        assert_close(&out, &[10.0, 10.0, 20.0, 20.0], 0.0)
    }

    #[test]
    fn gqa_is_causal_by_default() -> Result<(), String> {
        let [q, k, v, o] = two_tokens();
        let out = single(
            run(
                "flash_attention_gqa",
                None,
                &[q.clone(), k.clone(), v.clone(), o.clone()],
            )?,
            3,
        )?;
        assert_close(&out, &[1.0, 5.0], 1e-12)?;
        let off = call(
            "flash_attention_gqa",
            &[("is_causal", CallArg::Bool(false))],
        );
        let out = single(run("flash_attention_gqa", Some(&off), &[q, k, v, o])?, 3)?;
        assert_close(&out, &[3.5, 5.0], 1e-12)
    }

    #[test]
    fn gqa_rejects_indivisible_heads() {
        let q = poisoned(F, &[1, 3, 1, 1]);
        let kv = poisoned(F, &[1, 2, 1, 1]);
        assert!(run("flash_attention_gqa", None, &[q.clone(), kv.clone(), kv, q]).is_err());
        let q = poisoned(F, &[1, 2, 1, 1]);
        let kv = poisoned(F, &[1, 0, 1, 1]);
        assert!(run("flash_attention_gqa", None, &[q.clone(), kv.clone(), kv, q]).is_err());
    }
}
