"""Tiled matrix multiplication C = 2 · (A @ Bᵀ), B given as (N, K), whose
shared buffers are given layouts with `T.annotate_layout`: the operands
(rows of 128 bytes) and a staging buffer for the result, read back element
by element.

`layout` picks the constructor from `tilelang.layout`: "swizzled" (as
wide a swizzle as the rows allow), "full", "half" and "quarter" (128-,
64- and 32-byte swizzles), "linear" (dense rows), "none" (no
annotation). A layout says where the elements live, not what is
computed: C = 2 · (A @ Bᵀ) with float32 accumulation whatever it is.
"""

import tilelang
import tilelang.language as T
from tilelang import layout as L

CONSTRUCTORS = {
    "swizzled": L.make_swizzled_layout,
    "full": L.make_full_bank_swizzled_layout,
    "half": L.make_half_bank_swizzled_layout,
    "quarter": L.make_quarter_bank_swizzled_layout,
    "linear": L.make_linear_layout,
}


@tilelang.jit(out_idx=[-1])
def matmul_layouts(M=64, N=64, K=256, layout="swizzled", block_M=32, block_N=32, block_K=64):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((N, K), "float16"),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_N, block_K), "float16")
            S = T.alloc_shared((block_M, block_N), "float32")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            if layout != "none":
                make = CONSTRUCTORS[layout]
                T.annotate_layout({A_s: make(A_s), B_s: make(B_s), S: make(S)})
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True)
            T.copy(acc, S)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = S[i, j] * 2

    return main
