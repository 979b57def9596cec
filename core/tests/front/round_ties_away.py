# `T.round(x, "ties-away-from-zero")` rounds halves away from zero (C's
# `round`); the default mode, also spelled "ties-to-even", rounds them to
# the even neighbour. The inputs hold the halves -1.5 .. 1.5; C computes
# the expected values another way (floor of |x| + 1/2, with x's sign), and
# E the ties-to-even results by hand.
# RUN-EQUAL: B = C
# RUN-EQUAL: H = C
# RUN-EQUAL: D = E
import tilelang
import tilelang.language as T


@tilelang.jit
def round_ties_away(N=32):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((N,), "float32"),
        C: T.Tensor((N,), "float32"),
        H: T.Tensor((N,), "float32"),
        D: T.Tensor((N,), "float32"),
        E: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = A[i] - 1.5
                B[i] = T.round(x, "ties-away-from-zero")
                C[i] = T.if_then_else(x < 0, -T.floor(-x + 0.5), T.floor(x + 0.5))
                H[i] = T.cast(T.round(T.cast(x, "bfloat16"), rounding_mode="ties-away-from-zero"), "float32")
                D[i] = T.round(x, "ties-to-even") + T.round(2.5, "ties-away-from-zero")
                E[i] = T.if_then_else(x == 1.5, 2.0, T.if_then_else(x == -1.5, -2.0, T.if_then_else(x == 0.5, 0.0, T.if_then_else(x == -0.5, 0.0, x)))) + 3.0

    return main
