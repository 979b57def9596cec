"""RMS normalisation Y = X * rsqrt(mean(X ** 2, axis=-1) + eps) * W.

X and Y are (M, N), W is (N,). Each block owns block_M whole rows; the sum
of squares is accumulated in float32 and the weight is cast up with T.cast
before the multiply.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rmsnorm(M=256, N=512, block_M=8, eps=1e-6, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        W: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            W_shared = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            sq = T.alloc_fragment((block_M, N), accum_dtype)
            inv_rms = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(W, W_shared)
            T.copy(X_shared, x)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, inv_rms, dim=1)
            for i in T.Parallel(block_M):
                inv_rms[i] = T.rsqrt(inv_rms[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * inv_rms[i] * T.cast(W_shared[j], accum_dtype)
            T.copy(x, Y[bx * block_M, 0])

    return main


if __name__ == "__main__":
    import torch

    for M, N in [(256, 512), (100, 384)]:
        kernel = rmsnorm(M, N)
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        w = torch.randn(N, device="cuda", dtype=torch.float16)
        y = kernel(x, w)
        xf = x.float()
        ref = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * w.float()
        torch.testing.assert_close(y.float(), ref, rtol=1e-2, atol=1e-2)
        print(f"rmsnorm {M}x{N}: ok")
