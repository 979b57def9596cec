"""A TileLang name tilec does not support yet (T.sync_grid, a barrier of the whole grid): T0300."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def uses_sync_grid(N=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(2, threads=128) as bx:
            tx = T.get_thread_binding(0)
            if tx < N:
                Y[tx] = X[tx]
            T.sync_grid()
            if tx < N:
                Y[tx] = Y[(tx + 1) % N]

    return main
