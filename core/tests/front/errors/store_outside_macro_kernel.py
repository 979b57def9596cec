# The kernel may be opened by a macro: a store beside it is still outside
# any kernel, and refused.
import tilelang
import tilelang.language as T


@T.macro
def launch_copy(A, B):
    with T.Kernel(1, threads=32) as bx:
        T.copy(A, B)


@T.prim_func
def bad(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    launch_copy(A, B)
    for i in T.serial(32):  # ERROR: T0308
        B[i] = 0.0
