import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), undefined_dtype)):  # ERROR: T0101
    with T.Kernel(1, threads=64) as bx:
        A[0] = 1.0
