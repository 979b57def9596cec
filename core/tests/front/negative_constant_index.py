# A negative constant index counts from the end of its axis, as TileLang's
# `LegalizeNegativeIndex` pass reads it: `A[-1]` is the last element. Here
# `B` is `A` reversed by constant indices, then reversed back into `C`.
# RUN-EQUAL: C = A
# CHECK: %B[3] = %A[0]
import tilelang
import tilelang.language as T


@T.prim_func
def reverse_twice(
    A: T.Tensor((4,), "float32"),
    B: T.Tensor((4,), "float32"),
    C: T.Tensor((4,), "float32"),
):
    with T.Kernel(1, threads=1) as bx:
        B[-1] = A[0]
        B[-2] = A[T.int32(1)]
        B[-3] = A[-2]
        B[-4] = A[-1]
        for i in T.serial(4):
            C[i] = B[3 - i]
