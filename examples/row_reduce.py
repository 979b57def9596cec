"""Two reductions of one pass: the sum and the maximum of each row.

X is (M, N); the kernel returns both row_sum (M,) and row_max (M,), so it
names the last two parameters as outputs (out_idx=[-2, -1]). M may be
ragged; TileLang 0.1.15's layout inference wants N to be a power of two.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-2, -1])
def row_reduce(M=256, N=512, block_M=16, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        row_sum: T.Tensor((M,), dtype),
        row_max: T.Tensor((M,), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            s = T.alloc_fragment((block_M,), dtype)
            m = T.alloc_fragment((block_M,), dtype)

            T.copy(X[bx * block_M : (bx + 1) * block_M, :], x)
            T.reduce_sum(x, s, dim=1)
            T.reduce_max(x, m, dim=1)
            T.copy(s, row_sum[bx * block_M : (bx + 1) * block_M])
            T.copy(m, row_max[bx * block_M : (bx + 1) * block_M])

    return main


if __name__ == "__main__":
    import torch

    for M, N in [(256, 512), (100, 512)]:
        kernel = row_reduce(M, N)
        x = torch.randn(M, N, device="cuda", dtype=torch.float32)
        s, m = kernel(x)
        torch.testing.assert_close(s, x.sum(dim=1), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(m, x.amax(dim=1), rtol=0, atol=0)
        print(f"row_reduce {M}x{N}: ok")
