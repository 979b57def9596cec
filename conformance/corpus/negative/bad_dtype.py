"""A shared buffer with a dtype spelling no toolchain knows: T0301."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def bad_dtype(N=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((N,), "fp32")
            T.copy(X, s)
            T.copy(s, Y)

    return main
