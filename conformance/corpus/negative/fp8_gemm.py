"""A gemm on float8_e4m3fn operands: a dtype most targets cannot feed to
their matrix units. A target that does not claim fp8 gemm must refuse it
with a structured error.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fp8_gemm(M=64, N=64, K=64, dtype="float8_e4m3fn"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, K), dtype)
            B_s = T.alloc_shared((K, N), dtype)
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            T.copy(acc, C)

    return main
