# RUN
# tilelang.math's helpers run at build time, as in TileLang:
# next_power_of_2(x) is 1 << (x - 1).bit_length(), cdiv(a, b) is
# (a + b - 1) // b, also on run-time values.
# CHECK: f32[64]
# CHECK: kernel grid(4)
# CHECK: (%bx + 3 - 1) // 3 + 1 + 2 + 6
import tilelang
import tilelang.language as T
from tilelang.math import next_power_of_2
from tilelang.autotuner import *

WIDTH = tilelang.math.next_power_of_2(40)
ONE = next_power_of_2(1)
TWO = tilelang.next_power_of_2(2)
BITS = (WIDTH - 1).bit_length()


@autotune(configs=[{"block": 16}])
@tilelang.jit
def helpers(N=50, block=None):
    @T.prim_func
    def main(A: T.Tensor((WIDTH,), "float32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(tilelang.cdiv(N, block), threads=32) as bx:
            B[bx] = tilelang.math.cdiv(bx, 3) + ONE + TWO + BITS

    return main
