# `T.fast_rcp` is a float32 reciprocal only; a float16 value is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def fast_rcp_half(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float16")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.fast_rcp(A[i])  # ERROR: T0309

    return main
