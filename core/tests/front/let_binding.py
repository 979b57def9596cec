# `off = T.int32()` declares a variable and `T.let(off, value)` binds it for
# the rest of the scope: B[k, j] reads A at the bound offset.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def let_binding(N=32):
    @T.prim_func
    def main(A: T.Tensor((4 * N,), "float32"), B: T.Tensor((4, N), "float32"), C: T.Tensor((4, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for k in T.serial(4):
                off = T.int32()
                T.let(off, k * N)
                for j in T.Parallel(N):
                    B[k, j] = A[off + j]
                    C[k, j] = A[k * N + j]

    return main
