"""Row softmax of an (M, N) matrix, with float32 statistics.

Each block holds block_M whole rows; the row maximum and the row sum of
exponentials are tile reductions, and the exponentials use exp2 with
log2(e) folded in. M may be ragged (the last block's extra rows read zeros
and are not stored).
"""

import tilelang
import tilelang.language as T

LOG2E = 1.4426950408889634


@tilelang.jit(out_idx=[-1])
def softmax(M=16, N=64, block_M=8, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            m = T.alloc_fragment((block_M,), accum_dtype)
            s = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - m[i]) * LOG2E)
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[bx * block_M, 0])

    return main
