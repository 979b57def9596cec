"""Row-wise kernels over wide rows, TileLang-compatible builders.

A layer normalisation (no affine) and a per-row int8 quantisation of
(M, N) float32 rows, `block_M` rows per block, each row held whole in a
(block_M, N) fragment. With N = 8192, block_M = 4 and 128 threads the
fragments are 256 float32 elements per thread: more than the registers and,
two of them, more than the shared memory. `bench/wide_rows.py` runs them
through tilec, TileLang and torch.
"""

import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[1])
def layernorm(M, N, block_M=4, threads=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            a = T.alloc_fragment((block_M, N), "float32")
            sq = T.alloc_fragment((block_M, N), "float32")
            mean = T.alloc_fragment((block_M,), "float32")
            var = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M, 0], a)
            T.reduce_sum(a, mean, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = (a[i, j] - mean[i]) * (a[i, j] - mean[i])
            T.reduce_sum(sq, var, dim=1)
            for i in T.Parallel(block_M):
                var[i] = T.rsqrt(var[i] / N + 1e-5)
            for i, j in T.Parallel(block_M, N):
                a[i, j] = (a[i, j] - mean[i]) * var[i]
            T.copy(a, B[bx * block_M, 0])
    return main

@tilelang.jit(out_idx=[1, 2])
def quant_rows(M, N, block_M=4, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Q: T.Tensor((M, N), "int8"), S: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            ax = T.alloc_fragment((block_M, N), "float32")
            amax = T.alloc_fragment((block_M,), "float32")
            q = T.alloc_fragment((block_M, N), "int8")
            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, N):
                ax[i, j] = T.abs(x[i, j])
            T.reduce_max(ax, amax, dim=1)
            for i in T.Parallel(block_M):
                amax[i] = T.max(amax[i], 1e-8) / 127.0
            for i, j in T.Parallel(block_M, N):
                q[i, j] = T.cast(T.clamp(T.round(x[i, j] / amax[i]), -127.0, 127.0), "int8")
            T.copy(q, Q[bx * block_M, 0])
            for i in T.Parallel(block_M):
                S[bx * block_M + i] = amax[i]
    return main
