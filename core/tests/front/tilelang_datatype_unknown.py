# `tilelang.DataType` of a name that is no dtype is refused.
import tilelang
import tilelang.language as T
from tilelang import DataType


@tilelang.jit
def vector_copy(M=256):
    vec = 128 // DataType("float12").bits  # ERROR: T0301

    @T.prim_func
    def main(A: T.Tensor((M,), "float16"), B: T.Tensor((M,), "float16")):
        with T.Kernel(M // vec, threads=32) as bx:
            for v in T.Parallel(vec):
                B[bx * vec + v] = A[bx * vec + v]

    return main
