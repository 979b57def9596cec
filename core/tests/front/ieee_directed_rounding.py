# A directed rounding mode (toward zero here) has no equivalent in tilec's
# IR, which rounds to nearest only: refused at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def ieee_directed_rounding(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.ieee_add(A[i], 1.0, "rz")  # ERROR: T0300

    return main
