# RUN-EQUAL: B = A
# `tilelang.DataType` is TVM's `DataType` re-exported: a dtype by name,
# with its `bits`.
# CHECK: kernel grid(8)
import tilelang
import tilelang.language as T
from tilelang import DataType

TRANSACTION_BITS = 128


@tilelang.jit
def vector_copy(M=256, dtype=T.float16):
    vec = TRANSACTION_BITS // DataType(dtype).bits
    assert vec == 8 and tilelang.DataType("int8").bits == 8

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(M // (vec * 4), threads=4) as bx:
            for i, v in T.Parallel(4, vec):
                B[(bx * 4 + i) * vec + v] = A[(bx * 4 + i) * vec + v]

    return main
