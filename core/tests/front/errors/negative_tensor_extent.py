import tilelang
import tilelang.language as T


@T.prim_func
def negative(A: T.Tensor((64, -1), "float32")):  # ERROR: T0309
    with T.Kernel(1, threads=64):
        A[0, 0] = 1.0
