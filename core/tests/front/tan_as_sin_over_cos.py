# `T.tan(x)`: staged as sin(x) / cos(x) in float32 (a float16 value is
# widened, and the quotient rounded back). C computes it by hand; a Python
# number is evaluated when the kernel is built.
# RUN-EQUAL: B = C
# RUN-EQUAL: H = G
import math
import tilelang
import tilelang.language as T


@tilelang.jit
def tan_as_sin_over_cos(N=32):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((N,), "float32"),
        C: T.Tensor((N,), "float32"),
        X: T.Tensor((N,), "float16"),
        H: T.Tensor((N,), "float16"),
        G: T.Tensor((N,), "float16"),
    ):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.tan(A[i] - 1.5) + T.tan(0.25)
                C[i] = T.sin(A[i] - 1.5) / T.cos(A[i] - 1.5) + math.tan(0.25)
                H[i] = T.tan(X[i])
                G[i] = T.cast(T.sin(T.cast(X[i], "float32")) / T.cos(T.cast(X[i], "float32")), "float16")

    return main
