import tilelang
import tilelang.language as T

@T.prim_func
def first(A: T.Tensor((64,), "float32")):  # ERROR: T0201
    with T.Kernel(1, threads=64) as bx:
        A[0] = 1.0


@T.prim_func
def second(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        A[0] = 2.0
