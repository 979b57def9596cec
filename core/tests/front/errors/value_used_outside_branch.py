import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=64) as bx:
        if bx == 0:
            scale = A[0] * 2
        else:
            scale = A[1] * 3
        B[0] = scale  # ERROR: T0312
