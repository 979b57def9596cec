# `T.im2col` with a 3x3 kernel and padding 1: the border taps read zero.
# (One image row of 16 pixels: the rows above and below are padding.)
# RUN
# CHECK: parallel (
import tilelang
import tilelang.language as T


@tilelang.jit
def im2col_padded(H=1, W=16, C=16, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((1, H, W, C), dtype), K: T.Tensor((3, 3, C, 16), dtype), O: T.Tensor((1, H, W, 16), "float32")):
        with T.Kernel(1, threads=128) as bx:
            cols = T.alloc_shared((16, 16), dtype)
            ks = T.alloc_shared((16, 16), dtype)
            acc = T.alloc_fragment((16, 16), "float32")
            k_flat = T.Tensor((9 * C, 16), dtype, K.data)
            o_flat = T.Tensor((H * W, 16), "float32", O.data)
            T.clear(acc)
            for k in T.serial(9):
                T.im2col(A, cols, 0, k, 3, 1, 1, 1)
                T.copy(k_flat[k * 16, 0], ks)
                T.gemm(cols, ks, acc)
            T.copy(acc, o_flat[0, 0])

    return main
