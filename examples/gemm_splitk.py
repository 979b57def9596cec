"""Split-K matrix multiplication accumulated atomically: C += A @ B.

The grid has a third axis of `split_k` blocks; block bz reduces the K slice
[bz * K / split_k, (bz + 1) * K / split_k) into its own float32 accumulator
and adds it into C with T.atomic_add. C is a float32 input/output tensor that
the caller allocates (there is no out_idx): the product lands on top of C's
initial contents, so callers zero C first for a plain product.
"""

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(
    M=256,
    N=256,
    K=512,
    block_M=128,
    block_N=128,
    block_K=32,
    split_k=4,
    dtype="float16",
    accum_dtype="float32",
):
    assert K % split_k == 0, "K must divide evenly into split_k slices"
    slice_K = K // split_k
    assert slice_K % block_K == 0, "each K slice must be a whole number of block_K tiles"

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), accum_dtype),
    ):
        with T.Kernel(
            T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128
        ) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for k in T.Pipelined(slice_K // block_K, num_stages=2):
                T.copy(A[by * block_M, bz * slice_K + k * block_K], A_shared)
                T.copy(B[bz * slice_K + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M and bx * block_N + j < N:
                    T.atomic_add(C[by * block_M + i, bx * block_N + j], C_local[i, j])

    return main


if __name__ == "__main__":
    import torch

    for M, N, K in [(256, 256, 512), (200, 100, 256)]:
        kernel = matmul_splitk(M, N, K)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.ones(M, N, device="cuda", dtype=torch.float32)
        kernel(a, b, c)
        ref = 1.0 + a.float() @ b.float()
        torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-2)
        print(f"matmul_splitk {M}x{N}x{K}: ok")
