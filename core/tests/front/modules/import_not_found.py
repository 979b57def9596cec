# A module that is not beside the kernel (nor a package above it) stays
# opaque: importing it is fine, using it is an error at the use.
import tilelang
import tilelang.language as T
import _no_such_helper_module
from _no_such_helper_module import tile_for


@tilelang.jit
def copy(N=32):
    M = tile_for(N)  # ERROR: T0300

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)

    return main
