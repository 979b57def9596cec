# On gfx942 TileLang's FP8 choice is a FNUZ type, which tilec lacks.
# TARGET: gfx942
import tilelang
import tilelang.language as T
from tilelang.language.fp8 import determine_fp8_type


@tilelang.jit
def quantize(M=1024):
    dtype = determine_fp8_type()  # ERROR: T0300

    @T.prim_func
    def main(A: T.Tensor((M,), dtype)):
        with T.Kernel(8, threads=128) as bx:
            A[bx] = 0.0

    return main
