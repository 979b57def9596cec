"""A T.copy between regions of different extents: T0302."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_mismatch(N=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((32,), "float32")
            T.copy(X[0:16], s)
            T.copy(s, Y[0:32])

    return main
