# `T.ieee_add/sub/mul/fdiv/frcp/fsqrt` with the round-to-nearest mode
# ("rn", the default) are the plain operations, which round to nearest;
# `T.fast_rcp(x)` (an approximate float32 reciprocal) is staged as `1 / x`.
# B holds the results of the rounding-mode forms, C those of the plain
# operators on the same values.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def ieee_round_to_nearest(N=32):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((7, N), "float32"),
        C: T.Tensor((7, N), "float32"),
    ):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = A[i]
                y = A[(i + 1) % N] + 2.0
                B[0, i] = T.ieee_add(x, y)
                B[1, i] = T.ieee_sub(x, y, "rn")
                B[2, i] = T.ieee_mul(x, y, rounding_mode="rn")
                B[3, i] = T.ieee_fdiv(x, y)
                B[4, i] = T.ieee_frcp(y)
                B[5, i] = T.ieee_fsqrt(T.abs(x))
                B[6, i] = T.fast_rcp(y)
                C[0, i] = x + y
                C[1, i] = x - y
                C[2, i] = x * y
                C[3, i] = x / y
                C[4, i] = 1.0 / y
                C[5, i] = T.sqrt(T.abs(x))
                C[6, i] = 1.0 / y

    return main
