"""Tiled matrix multiplication C = op(A) @ op(B) with float32 accumulation.

A is (K, M) when trans_A else (M, K); B is (N, K) when trans_B else (K, N);
C is (M, N) in `out_dtype`. Each block accumulates a (block_M, block_N)
tile in a float32 fragment, walking K in block_K steps. Ragged sizes rely
on the out-of-bounds rule of T.copy (zeros in, partial tiles not stored).
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(
    M=64,
    N=64,
    K=64,
    trans_A=False,
    trans_B=False,
    dtype="float16",
    out_dtype="float32",
    accum_dtype="float32",
    block_M=64,
    block_N=64,
    block_K=32,
    num_stages=2,
):
    a_shape = (K, M) if trans_A else (M, K)
    b_shape = (N, K) if trans_B else (K, N)
    a_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor(a_shape, dtype),
        B: T.Tensor(b_shape, dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared(a_tile, dtype)
            B_s = T.alloc_shared(b_tile, dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_s)
                else:
                    T.copy(A[by * block_M, k * block_K], A_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main
