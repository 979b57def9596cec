"""RMS normalisation of the rows of an (M, N) matrix, scaled by W (N,).

Y[i, j] = X[i, j] / sqrt(mean_j(X[i, :]^2) + eps) * W[j], computed in
float32 and stored in `dtype`.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rmsnorm(M=16, N=64, block_M=4, eps=1e-6, dtype="float16"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        W: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            w = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((block_M, N), "float32")
            sq = T.alloc_fragment((block_M, N), "float32")
            r = T.alloc_fragment((block_M,), "float32")
            T.copy(W, w)
            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, r, dim=1)
            for i in T.Parallel(block_M):
                r[i] = T.rsqrt(r[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * r[i] * w[j].astype("float32")
            T.copy(x, Y[bx * block_M, 0])

    return main
