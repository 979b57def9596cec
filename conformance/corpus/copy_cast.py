"""Global -> shared -> global copy with a dtype conversion.

Each block stages a (block_M, block_N) tile of X (in `src_dtype`) in shared
memory and copies it to Y (in `dst_dtype`); the conversion happens in the
second T.copy, as a cast does. M and N need not be multiples of the tile:
the last tiles hang over the edges and rely on T.copy's out-of-bounds rule.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_cast(M=40, N=72, block_M=32, block_N=32, src_dtype="float32", dst_dtype="float16"):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), src_dtype),
        Y: T.Tensor((M, N), dst_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_shared((block_M, block_N), src_dtype)
            T.copy(X[by * block_M, bx * block_N], tile)
            T.copy(tile, Y[by * block_M, bx * block_N])

    return main
