"""A TileLang name tilec does not support yet (T.warp_reduce_sum, a warp-level reduction): T0300."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def uses_warp_reduce(N=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            tx = T.get_thread_binding(0)
            v = T.alloc_var("float32")
            v = X[tx % N]
            v = T.warp_reduce_sum(v)
            if tx < N:
                Y[tx] = v

    return main
