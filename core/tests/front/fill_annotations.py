import tilelang
import tilelang.language as T


# TileLang's fill, clear, reduce and cumsum take `annotations`, which
# change no value.
# CHECK: fill
@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((128,), "float32")
        S = T.alloc_fragment((1,), "float32")
        T.clear(S, annotations={})
        T.fill(F, 1.0, annotations={})
        T.reduce_sum(F, S, dim=0, annotations={})
        T.copy(S, B)
