"""Layer normalisation over the last axis.

Y = (X - mean) * rsqrt(var + eps) * gamma + beta, with mean and the biased
variance taken over each row of the (M, N) input; gamma and beta are (N,).
Statistics are accumulated in float32; inputs are cast up with .astype.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def layernorm(M=256, N=512, block_M=8, eps=1e-5, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        gamma: T.Tensor((N,), dtype),
        beta: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            gamma_shared = T.alloc_shared((N,), dtype)
            beta_shared = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            centered_sq = T.alloc_fragment((block_M, N), accum_dtype)
            mean = T.alloc_fragment((block_M,), accum_dtype)
            inv_std = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(gamma, gamma_shared)
            T.copy(beta, beta_shared)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = X_shared[i, j].astype(accum_dtype)

            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(block_M, N):
                centered_sq[i, j] = (x[i, j] - mean[i]) * (x[i, j] - mean[i])
            T.reduce_sum(centered_sq, inv_std, dim=1)
            for i in T.Parallel(block_M):
                inv_std[i] = T.rsqrt(inv_std[i] / N + eps)

            for i, j in T.Parallel(block_M, N):
                x[i, j] = (x[i, j] - mean[i]) * inv_std[i] * gamma_shared[j].astype(
                    accum_dtype
                ) + beta_shared[j].astype(accum_dtype)
            T.copy(x, Y[bx * block_M, 0])

    return main


if __name__ == "__main__":
    import torch

    for M, N in [(256, 512), (100, 384)]:
        kernel = layernorm(M, N)
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        gamma = torch.randn(N, device="cuda", dtype=torch.float16)
        beta = torch.randn(N, device="cuda", dtype=torch.float16)
        y = kernel(x, gamma, beta)
        ref = torch.nn.functional.layer_norm(x.float(), (N,), gamma.float(), beta.float(), eps=1e-5)
        torch.testing.assert_close(y.float(), ref, rtol=1e-2, atol=1e-2)
        print(f"layernorm {M}x{N}: ok")
