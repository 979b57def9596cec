"""A TileLang name tilec does not support yet (T.cummax, a running maximum): T0300."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def uses_cummax(N=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((N,), "float32")
            T.copy(X, s)
            T.cummax(s, dim=0)
            T.copy(s, Y)

    return main
