# `T.int32()` without a value declares a variable that TileLang's `T.let`
# binds later; tilec refuses it and says to assign the value to the name.
import tilelang
import tilelang.language as T


@tilelang.jit
def dtype_call_without_value(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            off = T.int32()  # ERROR: T0300
            for j in T.Parallel(N):
                B[j] = A[j]

    return main
