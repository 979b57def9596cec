"""A T.gemm reading its A operand straight from global memory: T0303."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_global_operand(M=32, N=32, K=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(B, B_s)
            T.gemm(A, B_s, acc, clear_accum=True)
            T.copy(acc, C)

    return main
