"""Elementwise addition C = A + B over an (M, N) matrix.

Each block owns a (block_M, block_N) tile: both operands are staged through
shared memory, added in a register fragment and written back. Sizes that are
not multiples of the block shape are handled by T.copy's out-of-bounds rule
(loads read 0, stores outside the tensor are skipped).
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M=256, N=512, block_M=32, block_N=128, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)

            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + B_shared[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    for M, N in [(256, 512), (100, 300)]:
        kernel = elementwise_add(M, N)
        a = torch.randn(M, N, device="cuda", dtype=torch.float16)
        b = torch.randn(M, N, device="cuda", dtype=torch.float16)
        c = kernel(a, b)
        torch.testing.assert_close(c, a + b, rtol=1e-2, atol=1e-2)
        print(f"elementwise_add {M}x{N}: ok")
