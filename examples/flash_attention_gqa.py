"""Grouped-query flash attention forward pass, (batch, heads, seq_len, dim) layout.

Q and Output have `heads` heads; K and V have `kv_heads` heads, and query
head h attends with key/value head h // (heads // kv_heads). Otherwise the
same online-softmax algorithm as flash_attention.py: float32 running maximum,
running sum and output accumulator, exp2 with log2(e) folded into `scale`,
and a causal mask (the default here) that stops the key loop after the
diagonal block.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flash_attention_gqa(
    batch=1,
    heads=4,
    kv_heads=2,
    seq_len=256,
    dim=64,
    is_causal=True,
    block_M=64,
    block_N=64,
    num_stages=1,
    threads=128,
):
    assert heads % kv_heads == 0, "heads must be a multiple of kv_heads"
    groups = heads // kv_heads
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # 1/sqrt(dim) * log2(e)
    q_shape = [batch, heads, seq_len, dim]
    kv_shape = [batch, kv_heads, seq_len, dim]
    dtype = "float16"
    accum_dtype = "float32"

    @T.macro
    def mask_scores(acc_s, bx, k):
        if is_causal:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum_dtype))
        elif seq_len % block_N != 0:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(k * block_N + j < seq_len, 0, -T.infinity(accum_dtype))
        else:
            T.clear(acc_s)

    @T.macro
    def softmax_rescale(acc_s, acc_o, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):
        T.copy(scores_max, scores_max_prev)
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] = acc_o[i, j] * scores_scale[i]

    @T.prim_func
    def main(
        Q: T.Tensor(q_shape, dtype),
        K: T.Tensor(kv_shape, dtype),
        V: T.Tensor(kv_shape, dtype),
        Output: T.Tensor(q_shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)

            kv_head = by // groups
            T.copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], Q_shared)
            T.clear(acc_o)
            T.clear(logsum)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(seq_len, block_N)
            )
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, kv_head, k * block_N : (k + 1) * block_N, :], K_shared)
                mask_scores(acc_s, bx, k)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                softmax_rescale(acc_s, acc_o, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                T.copy(acc_s, acc_s_cast)
                T.copy(V[bz, kv_head, k * block_N : (k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

    return main


if __name__ == "__main__":
    import torch

    def reference(q, k, v, is_causal):
        groups = q.shape[1] // k.shape[1]
        k = k.float().repeat_interleave(groups, dim=1)
        v = v.float().repeat_interleave(groups, dim=1)
        scores = (q.float() @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        if is_causal:
            s = q.shape[-2]
            mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
        return (torch.softmax(scores, dim=-1) @ v).half()

    for seq_len, is_causal in [(256, True), (256, False), (200, True), (200, False)]:
        kernel = flash_attention_gqa(seq_len=seq_len, is_causal=is_causal)
        q = torch.randn(1, 4, seq_len, 64, device="cuda", dtype=torch.float16)
        k = torch.randn(1, 2, seq_len, 64, device="cuda", dtype=torch.float16)
        v = torch.randn(1, 2, seq_len, 64, device="cuda", dtype=torch.float16)
        o = kernel(q, k, v)
        torch.testing.assert_close(o, reference(q, k, v, is_causal), rtol=1e-2, atol=1e-2)
        print(f"flash_attention_gqa seq_len={seq_len} is_causal={is_causal}: ok")
