# A run-time `T.Parallel` extent without a compile-time bound is refused:
# the note says to bound it with `T.min` or to guard the body.
import tilelang
import tilelang.language as T


@T.prim_func
def unbounded(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(n + 1):  # ERROR: T0306
            A[i] = 0.0
