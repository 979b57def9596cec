# Float `T.atomic_max` / `T.atomic_min` store the value only when it
# compares greater (less), as TileLang's compare-and-swap loop on CUDA
# does: a NaN value never replaces (B[0] stays 1.5), a NaN element stays
# NaN (B[1]: D[1] is 7 when B[1] is NaN), and +0.0 does not replace -0.0
# (B[2]: 1 / B[2] is -inf). D gathers them where NaN compares equal.
# RUN-EQUAL: D = E
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_max_float():
    @T.prim_func
    def main(B: T.Tensor((4,), "float32"), D: T.Tensor((4,), "float32"), E: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32):
            nan = T.alloc_var("float32", init=0.0)
            nan = T.infinity("float32") - T.infinity("float32")
            B[0] = 1.5
            B[1] = nan
            B[2] = T.float32(-1.0) * 0.0
            B[3] = 3.0
            for i in T.Parallel(1):
                T.atomic_max(B[0], nan)
                T.atomic_max(B[1], 2.0)
                T.atomic_max(B[2], 0.0)
                T.atomic_min(B[3], -2.5)
            D[0] = B[0]
            D[1] = T.if_then_else(B[1] != B[1], 7.0, 0.0)
            D[2] = 1.0 / B[2]
            D[3] = B[3]
            E[0] = 1.5
            E[1] = 7.0
            E[2] = -T.infinity("float32")
            E[3] = -2.5

    return main
