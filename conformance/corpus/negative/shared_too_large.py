"""A kernel whose shared buffer (1 << 20 float32, 4 MiB) exceeds the shared
memory of every target. The front end and the reference interpreter accept
it; a backend must refuse it with a structured error, not crash.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def huge_shared(N=1 << 20):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((N,), "float32")
            T.copy(X, s)
            T.copy(s, Y)

    return main
