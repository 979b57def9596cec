# KERNEL: outside
import tilelang
import tilelang.language as T


@T.prim_func
def outside(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.reads(A[0:64])  # ERROR: T0308
        for i in T.Parallel(64):
            A[i] = 1.0


@T.prim_func
def bound(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        with T.sblock("b") as b:  # ERROR: T0300
            A[0] = 1.0


@T.prim_func
def unnamed(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        with T.sblock(3):  # ERROR: T0103
            A[0] = 1.0
