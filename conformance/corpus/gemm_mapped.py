"""Tiled matrix multiplication C = 2 · (A @ Bᵀ), B given as (N, K), whose
shared buffers are given layouts written out with `T.Layout`: functions
of the element's indices that are none of the built-in layouts (or one,
written by hand), followed through every access.

`layout` picks the map: "xor" (16-byte chunks of a row permuted by the
row number), "blocked" (8 × 8 blocks stored one after another),
"rotated" (each row rotated by its number), "transposed" (columns
stored as rows), "reversed" (each row stored back to front) and
"padded" (rows 8 elements apart beyond their length, which is the
built-in padded layout). A layout says where the elements live, not
what is computed: C = 2 · (A @ Bᵀ) with float32 accumulation whatever it
is.
"""

import tilelang
import tilelang.language as T


def layout_of(kind, rows, cols):
    if kind == "xor":
        return T.Layout((rows, cols), lambda i, j: i * cols + ((j // 8) ^ (i * 3 % (cols // 8))) * 8 + j % 8)
    if kind == "blocked":
        return T.Layout((rows, cols), lambda i, j: (i // 8 * (cols // 8) + j // 8) * 64 + i % 8 * 8 + j % 8)
    if kind == "rotated":
        return T.Layout((rows, cols), lambda i, j: i * cols + (j + i) % cols)
    if kind == "transposed":
        return T.Layout((rows, cols), lambda i, j: j * rows + i)
    if kind == "reversed":
        return T.Layout((rows, cols), lambda i, j: [i, cols - 1 - j])
    return T.Layout((rows, cols), lambda i, j: i * (cols + 8) + j)


@tilelang.jit(out_idx=[-1])
def matmul_mapped(M=64, N=64, K=256, layout="xor", block_M=32, block_N=32, block_K=64):
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
            T.annotate_layout({
                A_s: layout_of(layout, block_M, block_K),
                B_s: layout_of(layout, block_N, block_K),
                S: layout_of(layout, block_M, block_N),
            })
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True)
            T.copy(acc, S)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = S[i, j] * 2

    return main
