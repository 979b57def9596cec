# `T.round` knows two rounding modes; any other is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def round_mode_unknown(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.round(A[i], "ties-to-odd")  # ERROR: T0309

    return main
