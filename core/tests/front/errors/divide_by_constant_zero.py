import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i // 0]  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[i % 0]  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[i] / 0  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[T.floordiv(i, 0)]  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[T.floormod(i, 0)]  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[T.truncdiv(i, 0)]  # ERROR: T0107
        for i in T.Parallel(128):
            B[i] = A[bx // 0]  # ERROR: T0107
