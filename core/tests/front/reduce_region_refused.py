# A reduction reads a whole buffer (or a view of one), as in TileLang; a
# region of a buffer is refused with a note to copy it first.
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_region_refused(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((8, 32), dtype), B: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_fragment((8, 32), dtype)
            o = T.alloc_fragment((4,), dtype)
            T.copy(A, s)
            T.reduce_sum(s[0:4, :], o, dim=1)  # ERROR: T0103
            T.copy(o, B)

    return main
