# `T.StridedTensor` with strides other than the row-major ones of its shape
# (here column-major) is refused: tilec's tensors are dense and row-major.
import tilelang
import tilelang.language as T


@tilelang.jit
def strided_column_major(M=16, N=16):
    @T.prim_func
    def main(
        A: T.StridedTensor((M, N), (1, M), "float32"),  # ERROR: T0300
        B: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(1, threads=64) as bx:
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j]

    return main
