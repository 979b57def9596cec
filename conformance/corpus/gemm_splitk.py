"""Split-K matrix multiplication accumulated atomically: C += A @ B.

The third grid axis has `split_k` blocks; block bz reduces its K slice into
a float32 fragment and adds the tile into C with a region T.atomic_add.
C is an input/output float32 tensor (no out_idx): the product lands on top
of C's initial contents. The order of the atomic additions is unspecified,
so results may differ in the last bits from run to run on real hardware.
"""

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(M=64, N=64, K=128, split_k=2, dtype="float16", block_M=32, block_N=32, block_K=32):
    slice_K = T.ceildiv(K, split_k)
    k_tiles = T.ceildiv(slice_K, block_K)

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(k_tiles, num_stages=2):
                k0 = bz * slice_K + k * block_K
                T.copy(A[by * block_M, k0], A_s)
                T.copy(B[k0, bx * block_N], B_s)
                # Zero the part of the tile that belongs to the next slice.
                for i, j in T.Parallel(block_M, block_K):
                    A_s[i, j] = T.if_then_else(k * block_K + j < slice_K, A_s[i, j], 0)
                T.gemm(A_s, B_s, acc)
            T.atomic_add(C[by * block_M, bx * block_N], acc)

    return main
