# `T.tan` takes a number.
import tilelang
import tilelang.language as T


@tilelang.jit
def tan_of_string(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + T.tan("pi")  # ERROR: T0103

    return main
