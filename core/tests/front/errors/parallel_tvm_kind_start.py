# `T.parallel(start, stop)` with a start other than 0 is refused, with the
# `T.Parallel` form to write instead.
import tilelang
import tilelang.language as T


@T.prim_func
def shifted(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.parallel(8, 64):  # ERROR: T0300
            A[i] = 0.0
