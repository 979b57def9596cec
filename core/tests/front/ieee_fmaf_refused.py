# `T.ieee_fmaf` rounds `x * y + z` once; tilec's IR has no fused
# multiply-add, so it is refused (as is `T.ieee_frsqrt`).
import tilelang
import tilelang.language as T


@tilelang.jit
def ieee_fmaf_refused(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.ieee_fmaf(A[i], A[i], 1.0)  # ERROR: T0300

    return main
