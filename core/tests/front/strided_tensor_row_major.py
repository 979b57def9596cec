# `T.StridedTensor(shape, strides, dtype)` whose strides are the row-major
# strides of its shape is the dense `T.Tensor(shape, dtype)`: here the
# strides are constants, products of symbolic extents, and, on an axis of
# extent 1, a stride that is never used (its index is always 0).
# RUN-SYMBOL: n=8
# RUN-EQUAL: B = A
# RUN-EQUAL: D = C
import tilelang
import tilelang.language as T


@tilelang.jit
def strided_row_major(M=4, K=16):
    n = T.dynamic("n")
    unused = T.dynamic("unused")

    @T.prim_func
    def main(
        A: T.StridedTensor((M, n, K), (n * K, K, 1), "float32"),
        B: T.StridedTensor[(M, n, K), (K * n, K, 1), "float32"],
        C: T.StridedTensor((1, M, K), (unused, 16, 1), "float32"),
        D: T.StridedTensor((1, M, K), (M * K, K, 1), "float32"),
    ):
        with T.Kernel(n, threads=64) as bx:
            for i, k in T.Parallel(M, K):
                B[i, bx, k] = A[i, bx, k]
            for i, k in T.Parallel(M, K):
                D[0, i, k] = C[0, i, k]

    return main
