# RUN-SYMBOL: K=1000
# A size computed outside the kernel from symbolic sizes names that
# expression: it is used inside the kernel as it is.
# CHECK-NOT: let
import tilelang
import tilelang.language as T

K = T.symbolic("K")


@T.prim_func
def halves(A: T.Tensor((K,), "float32"), B: T.Tensor((K,), "float32")):
    half = K // 2
    with T.Kernel(T.ceildiv(half, 128), threads=128) as bx:
        for i in T.Parallel(128):
            if bx * 128 + i < half:
                B[bx * 128 + i] = A[half + bx * 128 + i]
