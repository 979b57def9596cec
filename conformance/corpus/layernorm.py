"""Layer normalisation of the rows of an (M, N) matrix.

Y[i, :] = (X[i, :] - mean) / sqrt(var + eps) * gamma + beta, with the mean
and the (biased) variance computed in float32 by two tile reductions.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def layernorm(M=16, N=64, block_M=4, eps=1e-5, dtype="float16"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        gamma: T.Tensor((N,), dtype),
        beta: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            g = T.alloc_shared((N,), dtype)
            b = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((block_M, N), "float32")
            d = T.alloc_fragment((block_M, N), "float32")
            mean = T.alloc_fragment((block_M,), "float32")
            rstd = T.alloc_fragment((block_M,), "float32")
            T.copy(gamma, g)
            T.copy(beta, b)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(block_M, N):
                d[i, j] = (x[i, j] - mean[i]) * (x[i, j] - mean[i])
            T.reduce_sum(d, rstd, dim=1)
            for i in T.Parallel(block_M):
                rstd[i] = T.rsqrt(rstd[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = (x[i, j] - mean[i]) * rstd[i] * g[j].astype("float32") + b[j].astype("float32")
            T.copy(x, Y[bx * block_M, 0])

    return main
