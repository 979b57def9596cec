"""Tile operations under a condition on the thread index.

TileLang spreads a `T.Parallel` nest or a `T.copy` under `if tx < k:` (or
`tx >= k`, `k1 <= tx < k2`) over exactly the threads that pass the
condition; the other threads skip it. Here the first half of the block
loads one tile of A into shared memory through a parallel nest, the second
half loads a tile of C with `T.copy`, and after the `if` every thread
adds them. A thread-guarded scalar read (`tx == 0`) writes one value per
block.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2, 3])
def guarded_region(M=64, N=64, block_M=16, threads=128, dtype="float32"):
    half = threads // 2

    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        First: T.Tensor((T.ceildiv(M, block_M),), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_s = T.alloc_shared((block_M, N), dtype)
            C_s = T.alloc_shared((block_M, N), dtype)
            tx = T.get_thread_binding(0)
            if tx < half:
                for i, j in T.Parallel(block_M, N):
                    A_s[i, j] = A[bx * block_M + i, j]
            else:
                T.copy(C[bx * block_M, 0], C_s)
            for i, j in T.Parallel(block_M, N):
                B[bx * block_M + i, j] = A_s[i, j] + C_s[i, j]
            if tx == 0:
                First[bx] = A_s[0, 0]

    return main
