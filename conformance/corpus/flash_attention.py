"""Flash attention forward, (batch, heads, seq_len, dim) layout, with GQA.

Q and O have `heads` heads, K and V have heads // groups heads; query head
h reads key/value head h // groups. Online softmax with a float32 running
maximum, sum and output accumulator; exp2 with log2(e) folded into the
scale. With is_causal the key loop stops after the diagonal block and
scores above the diagonal are masked; a ragged seq_len masks the keys past
the end.

With rotated=True the key loop carries FA3-style `order`/`stage` lists:
the copies at stage -1, the rescale of the output and `P · V` at stage 1
and issued before the softmax of the next key block, the rest at stage 0;
the pass config asks tilec to follow them. The result is the same as
without them.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3], pass_configs={"tilec.follow_pipeline_lists": True})
def attention(
    batch=1,
    heads=2,
    groups=1,
    seq_len=64,
    dim=32,
    is_causal=False,
    block_M=32,
    block_N=32,
    dtype="float16",
    rotated=False,
    num_stages=1,
):
    assert heads % groups == 0
    kv_heads = heads // groups
    scale = (1.0 / dim) ** 0.5 * 1.4426950408889634
    acc_t = "float32"

    @T.prim_func
    def main(
        Q: T.Tensor((batch, heads, seq_len, dim), dtype),
        K: T.Tensor((batch, kv_heads, seq_len, dim), dtype),
        V: T.Tensor((batch, kv_heads, seq_len, dim), dtype),
        O: T.Tensor((batch, heads, seq_len, dim), dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            q = T.alloc_shared((block_M, dim), dtype)
            k_s = T.alloc_shared((block_N, dim), dtype)
            v_s = T.alloc_shared((block_N, dim), dtype)
            s = T.alloc_fragment((block_M, block_N), acc_t)
            p = T.alloc_fragment((block_M, block_N), dtype)
            o = T.alloc_fragment((block_M, dim), acc_t)
            m = T.alloc_fragment((block_M,), acc_t)
            m_prev = T.alloc_fragment((block_M,), acc_t)
            corr = T.alloc_fragment((block_M,), acc_t)
            row = T.alloc_fragment((block_M,), acc_t)
            l = T.alloc_fragment((block_M,), acc_t)

            kvh = by // groups
            T.copy(Q[bz, by, bx * block_M, 0], q)
            T.clear(o)
            T.clear(l)
            T.fill(m, -T.infinity(acc_t))
            n_blocks = T.ceildiv(seq_len, block_N)
            if is_causal:
                n_blocks = T.min(n_blocks, T.ceildiv((bx + 1) * block_M, block_N))
            # One entry per statement of the loop body below.
            order = [0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 4, 12, 5] if rotated else None
            stage = [-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1] if rotated else None
            for kb in T.Pipelined(n_blocks, num_stages=num_stages, order=order, stage=stage):
                T.copy(K[bz, kvh, kb * block_N, 0], k_s)
                T.copy(V[bz, kvh, kb * block_N, 0], v_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(
                            (bx * block_M + i >= kb * block_N + j) and (kb * block_N + j < seq_len),
                            0,
                            -T.infinity(acc_t),
                        )
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(kb * block_N + j < seq_len, 0, -T.infinity(acc_t))
                T.gemm(q, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    corr[i] = T.exp2((m_prev[i] - m[i]) * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2((s[i, j] - m[i]) * scale)
                T.reduce_sum(s, row, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * corr[i] + row[i]
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] = o[i, j] * corr[i]
                T.copy(s, p)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                o[i, j] = o[i, j] / l[i]
            T.copy(o, O[bz, by, bx * block_M, 0])

    return main
