import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.atomic_add(A[0], 1.0, return_prev=True)  # ERROR: T0300
