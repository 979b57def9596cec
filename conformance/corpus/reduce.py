"""A tile reduction along one dimension, with or without clearing.

X is an (M, N) tile held by one block in a fragment. `kind` picks
T.reduce_{sum,max,min,abssum,absmax}; `dim` the reduced dimension, so Out
has N elements for dim=0 and M for dim=1. With clear=False the reduction
accumulates onto Init (same shape as Out), which the kernel loads first;
with clear=True Init is ignored.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce(M=32, N=48, kind="sum", dim=1, clear=True, dtype="float32"):
    out_len = N if dim == 0 else M

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Init: T.Tensor((out_len,), dtype),
        Out: T.Tensor((out_len,), dtype),
    ):
        with T.Kernel(1, threads=128) as _:
            x = T.alloc_fragment((M, N), dtype)
            r = T.alloc_fragment((out_len,), dtype)
            T.copy(X, x)
            if not clear:
                T.copy(Init, r)
            if kind == "sum":
                T.reduce_sum(x, r, dim=dim, clear=clear)
            elif kind == "max":
                T.reduce_max(x, r, dim=dim, clear=clear)
            elif kind == "min":
                T.reduce_min(x, r, dim=dim, clear=clear)
            elif kind == "abssum":
                T.reduce_abssum(x, r, dim=dim, clear=clear)
            else:
                T.reduce_absmax(x, r, dim=dim, clear=clear)
            T.copy(r, Out)

    return main
