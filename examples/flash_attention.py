"""Flash attention forward pass, (batch, heads, seq_len, dim) layout.

Output = softmax(Q @ K^T / sqrt(dim)) @ V for every batch and head, computed
one (block_M query rows) x (block_N key rows) tile at a time with the online
softmax: a running row maximum, a running row sum (logsum) and a float32
output accumulator that is rescaled whenever the maximum grows. Exponentials
are exp2 with log2(e) folded into `scale`.

With is_causal the query at position q sees keys 0..q only: the key loop
stops after the diagonal block and scores above the diagonal are masked to
-inf. Without it, a ragged last key block (seq_len % block_N != 0) masks the
keys past seq_len.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flash_attention(
    batch=1,
    heads=2,
    seq_len=256,
    dim=64,
    is_causal=False,
    block_M=64,
    block_N=64,
    num_stages=1,
    threads=128,
):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # 1/sqrt(dim) * log2(e)
    shape = [batch, heads, seq_len, dim]
    dtype = "float16"
    accum_dtype = "float32"

    def key_blocks(bx):
        # Number of key blocks query block bx has to visit.
        if is_causal:
            return T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
        return T.ceildiv(seq_len, block_N)

    @T.macro
    def online_softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):
        T.copy(scores_max, scores_max_prev)
        T.fill(scores_max, -T.infinity(accum_dtype))
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_M):
            scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        T.copy(acc_s, acc_s_cast)

    @T.macro
    def rescale(acc_o, scores_scale):
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] *= scores_scale[i]

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            O_shared = T.alloc_shared((block_M, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            for k in T.Pipelined(key_blocks(bx), num_stages=num_stages):
                T.copy(K[bz, by, k * block_N : (k + 1) * block_N, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(
                            bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum_dtype)
                        )
                elif seq_len % block_N != 0:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(
                            k * block_N + j < seq_len, 0, -T.infinity(accum_dtype)
                        )
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                online_softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                rescale(acc_o, scores_scale)

                T.copy(V[bz, by, k * block_N : (k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

    return main


if __name__ == "__main__":
    import torch

    def reference(q, k, v, is_causal):
        scores = (q.float() @ k.float().transpose(-1, -2)) / q.shape[-1] ** 0.5
        if is_causal:
            s = q.shape[-2]
            mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
        return (torch.softmax(scores, dim=-1) @ v.float()).half()

    for seq_len in [256, 200]:
        for is_causal in [False, True]:
            kernel = flash_attention(seq_len=seq_len, is_causal=is_causal)
            q, k, v = (torch.randn(1, 2, seq_len, 64, device="cuda", dtype=torch.float16) for _ in range(3))
            o = kernel(q, k, v)
            torch.testing.assert_close(o, reference(q, k, v, is_causal), rtol=1e-2, atol=1e-2)
            print(f"flash_attention seq_len={seq_len} is_causal={is_causal}: ok")
