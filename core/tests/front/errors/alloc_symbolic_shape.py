# An on-chip buffer sized by a symbolic size is refused: TileLang sizes it
# at launch (dynamic shared memory), tilec when compiling; the note names
# the symbol and the `-D` that gives it a value.
import tilelang
import tilelang.language as T


@tilelang.jit
def sized_at_launch():
    length = T.symbolic("length")

    @T.prim_func
    def main(A: T.Tensor((length,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((length,), "float32")  # ERROR: T0306
            T.copy(A, S)

    return main
