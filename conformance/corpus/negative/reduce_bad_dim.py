"""A reduction whose destination shape does not match `dim`: T0304."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce_bad_dim(M=16, N=32):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), "float32"),
        Y: T.Tensor((M,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            x = T.alloc_fragment((M, N), "float32")
            r = T.alloc_fragment((M,), "float32")
            T.copy(X, x)
            T.reduce_max(x, r, dim=0)
            T.copy(r, Y)

    return main
