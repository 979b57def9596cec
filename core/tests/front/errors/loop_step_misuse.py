# KERNEL: zero
import tilelang
import tilelang.language as T


@T.prim_func
def zero(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        for i in T.serial(0, 64, 0):  # ERROR: T0300
            A[i] = 1.0


@T.prim_func
def backwards(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        for i in range(63, -1, -1):  # ERROR: T0300
            A[i] = 1.0


@T.prim_func
def vector(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        for i in T.vectorized(0, 8, 2):  # ERROR: T0300
            A[i] = 1.0
