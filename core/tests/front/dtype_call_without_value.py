# `T.int32()` without a value outside `T.Kernel` would be a variable of the
# function: refused, as is `T.let` of something that is not a variable.
import tilelang
import tilelang.language as T


@tilelang.jit
def dtype_call_without_value(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        off = T.int32()  # ERROR: T0300
        with T.Kernel(1, threads=32) as bx:
            T.let(A, 3)  # ERROR: T0309
            for j in T.Parallel(N):
                B[j] = A[j]

    return main
