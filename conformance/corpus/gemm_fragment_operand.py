"""Matrix multiplication whose A operand is staged in a fragment.

A tile goes global -> shared -> fragment (registers) and feeds T.gemm from
there, as attention kernels do with their probabilities; B stays in shared
memory (transposed when trans_B). Accumulation is float32; C is float32.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_frag_a(M=64, N=64, K=64, trans_B=False, dtype="float16", block_M=64, block_N=64, block_K=32):
    b_shape = (N, K) if trans_B else (K, N)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor(b_shape, dtype),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            A_f = T.alloc_fragment((block_M, block_K), dtype)
            B_s = T.alloc_shared(b_tile, dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(A_s, A_f)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_f, B_s, acc, transpose_B=trans_B)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main
