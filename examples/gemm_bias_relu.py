"""Fused GEMM epilogue: C = relu(A @ B + bias).

A is (M, K), B is (K, N), bias is (N,) and broadcast over rows. The bias add
and the ReLU run in a T.Parallel over the float32 accumulator fragment before
the single cast-and-store of the tile.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_bias_relu(
    M=256,
    N=256,
    K=256,
    block_M=128,
    block_N=128,
    block_K=32,
    dtype="float16",
    accum_dtype="float32",
):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        bias: T.Tensor((N,), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            bias_shared = T.alloc_shared((block_N,), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.copy(bias[bx * block_N], bias_shared)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + T.cast(bias_shared[j], accum_dtype), 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    for M, N, K in [(256, 256, 256), (200, 136, 72)]:
        kernel = matmul_bias_relu(M, N, K)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        bias = torch.randn(N, device="cuda", dtype=torch.float16)
        c = kernel(a, b, bias)
        ref = torch.relu(a.float() @ b.float() + bias.float())
        torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-2)
        print(f"matmul_bias_relu {M}x{N}x{K}: ok")
