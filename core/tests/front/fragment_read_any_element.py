import tilelang
import tilelang.language as T


# A fragment may be read with indices that are not the parallel loop's
# variables: a serial loop over its rows (a small matrix product kept in
# fragments), and a constant column. Only stores must follow the loop.
# RUN-EQUAL: C = B
@T.prim_func
def mix(A: T.Tensor((4, 4), "float32"), X: T.Tensor((4, 32), "float32"), B: T.Tensor((4, 32), "float32"), C: T.Tensor((4, 32), "float32")):
    with T.Kernel(1, threads=64) as bx:
        a = T.alloc_fragment((4, 4), "float32")
        x = T.alloc_fragment((4, 32), "float32")
        y = T.alloc_fragment((4, 32), "float32")
        T.copy(A, a)
        T.copy(X, x)
        for i, j in T.Parallel(4, 32):
            y[i, j] = 0.0
            for k in T.serial(4):
                y[i, j] += a[i, k] * x[k, j]
        T.copy(y, B)
        for i, j in T.Parallel(4, 32):
            y[i, j] = a[i, 0] * x[0, j] + a[i, 1] * x[1, j] + a[i, 2] * x[2, j] + a[i, 3] * x[3, j]
        T.copy(y, C)
