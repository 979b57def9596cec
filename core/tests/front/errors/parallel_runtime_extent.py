import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=64) as bx:
        for i in T.Parallel(bx + 1):  # ERROR: T0306
            B[i] = A[i]
