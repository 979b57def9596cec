# KERNEL: late
# Misplaced and unsupported uses of `T.annotate_safe_value`.
import tilelang
import tilelang.language as T


@T.prim_func
def late(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            B[i] = A[i + 1]
        # Too late: TileLang would pad the load above as well.
        T.annotate_safe_value({A: 3})  # ERROR: T0300


@T.prim_func
def atomic_region(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.annotate_safe_value({A: 3})
        T.atomic_add(B[0:64], A[8:72])  # ERROR: T0300


@T.prim_func
def not_a_number(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.annotate_safe_value({A: B})  # ERROR: T0306
