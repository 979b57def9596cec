"""A tile loaded by part of the block: B = A through a thread-guarded load.

Each block of `threads` threads owns a (block_M, block_N) tile. Only the
threads with index below `loaders` stage the tile into shared memory (an
`if` on `T.get_thread_binding(0)`); TileLang spreads the guarded parallel
loop over exactly those threads, so the whole tile is loaded. After the `if`
every thread takes part in the store to B. This is the shape of hand-split
producer/consumer kernels: a thread range that loads, the whole block that
computes.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def guarded_copy(M=256, N=256, block_M=64, block_N=64, threads=256, loaders=128, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            tx = T.get_thread_binding(0)
            if tx < loaders:
                for i, k in T.Parallel(block_M, block_N):
                    A_shared[i, k] = A[by * block_M + i, bx * block_N + k]
            T.copy(A_shared, B[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    for M, N in [(256, 256), (128, 320)]:
        kernel = guarded_copy(M, N)
        a = torch.randn(M, N, device="cuda", dtype=torch.float16)
        b = kernel(a)
        torch.testing.assert_close(b, a, rtol=0, atol=0)
        print(f"guarded_copy {M}x{N}: ok")
