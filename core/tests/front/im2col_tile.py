# `T.im2col` gathers the im2col tile of an NHWC image (zero outside the
# padded image) as a parallel nest; with a 1x1 kernel, stride 1 and no
# padding the tile is the image itself, flattened to (N*H*W, C).
# RUN-EQUAL: B = A
# CHECK: parallel (
# CHECK: select(
import tilelang
import tilelang.language as T


@tilelang.jit
def im2col_tile(N=2, H=2, W=8, C=16, block_M=8, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((N, H, W, C), dtype), B: T.Tensor((N, H, W, C), dtype)):
        with T.Kernel(N * H * W // block_M, threads=64) as bx:
            S = T.alloc_shared((block_M, C), dtype)
            T.im2col(A, S, bx, 0, 1, 1, 1, 0)
            b_flat = T.Tensor((N * H * W, C), dtype, B.data)
            T.copy(S, b_flat[bx * block_M, 0])

    return main
