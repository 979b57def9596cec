import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for k in T.serial(4):
            A[k] = 1.0
        A[k] = 2.0  # ERROR: T0312
