import tilelang
import tilelang.language as T

HUGE = 2 ** 62 * 4  # reported where it is used


@T.prim_func
def uses(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        A[0] = HUGE  # ERROR: T0108
