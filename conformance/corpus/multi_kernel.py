"""Two sequential T.Kernel scopes in one prim_func.

The first kernel writes T = X * scale (in float32) tile by tile; the second
reads T back with a different tiling and writes Y = T + X (in `dtype`). The
second kernel must see everything the first wrote.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def two_pass(M=48, N=40, block_1=16, block_2=32, scale=2.0, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Tmp: T.Tensor((M, N), "float32"),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_1), T.ceildiv(M, block_1), threads=128) as (bx, by):
            a = T.alloc_fragment((block_1, block_1), "float32")
            T.copy(X[by * block_1, bx * block_1], a)
            for i, j in T.Parallel(block_1, block_1):
                a[i, j] = a[i, j] * scale
            T.copy(a, Tmp[by * block_1, bx * block_1])
        with T.Kernel(T.ceildiv(M, block_2), threads=64) as bx:
            t = T.alloc_fragment((block_2, N), "float32")
            x = T.alloc_fragment((block_2, N), "float32")
            T.copy(Tmp[bx * block_2, 0], t)
            T.copy(X[bx * block_2, 0], x)
            for i, j in T.Parallel(block_2, N):
                t[i, j] = t[i, j] + x[i, j]
            T.copy(t, Y[bx * block_2, 0])

    return main
