"""Copies and fills on tiles that hang over the edges of their tensors.

`mode` picks the access pattern; every mode uses (block, block) tiles over
an (M, N) matrix whose sizes need not be multiples of `block`:

- "copy": X -> shared -> Y; loads past the edge read 0, stores are dropped;
- "copy_fragment": X -> fragment -> Y;
- "fill": Y's tiles are filled with 7, then X's tile is added on top
  through a fragment, so Y = X + 7 inside the matrix;
- "shift": the source tile is offset by half a tile, so part of every edge
  tile reads zeros from outside X: Y[i, j] = X[i + block//2, j + block//2]
  where that is inside X, else 0.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def oob(M=37, N=50, block=16, mode="copy", dtype="float32"):
    half = block // 2

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            s = T.alloc_shared((block, block), dtype)
            f = T.alloc_fragment((block, block), dtype)
            if mode == "copy":
                T.copy(X[by * block, bx * block], s)
                T.copy(s, Y[by * block, bx * block])
            elif mode == "copy_fragment":
                T.copy(X[by * block : (by + 1) * block, bx * block : (bx + 1) * block], f)
                T.copy(f, Y[by * block : (by + 1) * block, bx * block : (bx + 1) * block])
            elif mode == "fill":
                T.fill(f, 7)
                T.copy(X[by * block, bx * block], s)
                for i, j in T.Parallel(block, block):
                    f[i, j] = f[i, j] + s[i, j]
                T.copy(f, Y[by * block, bx * block])
            else:
                T.copy(X[by * block + half, bx * block + half], s)
                T.copy(s, Y[by * block, bx * block])

    return main
