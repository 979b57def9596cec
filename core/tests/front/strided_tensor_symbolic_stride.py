# A stride given by a symbol of its own (set from the tensor at run time in
# TileLang) is not the row-major stride of the shape, so it is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def strided_symbolic_stride(N=64):
    stride = T.dynamic("stride")

    @T.prim_func
    def main(
        A: T.StridedTensor[(N,), (stride,), T.float32],  # ERROR: T0300
        B: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
