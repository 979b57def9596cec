# An error inside a helper module is reported at the import that brought
# the module in, and its message names the module's file and line.
import tilelang
import tilelang.language as T
from _broken_helpers import block_count  # ERROR: T0101


@tilelang.jit
def copy(N=32):
    M = block_count(N)

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)

    return main
