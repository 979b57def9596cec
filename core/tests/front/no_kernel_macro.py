# Whether a body launches kernels is judged through the macros it calls:
# `launch_copy` opens a `T.Kernel`, so `with_kernel` is staged as it is
# (no warning), while `scaled` calls a macro without one and runs as one
# thread of a single block.
# KERNEL: scaled
# RUN-EQUAL: B = A
# CHECK: kernel grid(1) threads(1)
import tilelang
import tilelang.language as T


@T.macro
def launch_copy(A, B):
    with T.Kernel(1, threads=32) as bx:
        T.copy(A, B)


@T.macro
def twice(A, B, i):
    B[i] = A[i] * 2.0


@T.prim_func
def with_kernel(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    launch_copy(A, B)


@T.prim_func
def scaled(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):  # WARNING: W0002
    for i in T.serial(32):
        twice(A, B, i)
    for i in T.serial(32):
        B[i] = B[i] * 0.5
