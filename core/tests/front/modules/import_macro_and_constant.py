# A kernel whose macro and constant come from its own helper module beside
# it, imported both as `from ... import` and as a module name.
# RUN
import tilelang
import tilelang.language as T
import _quant_helpers as qh
from _quant_helpers import WIDTH, scale_into


# CHECK: parallel (%i < 32)
# CHECK: %B[%i] = %A[%i] * f32(3.0)
# CHECK: %C[%i.1] = %A[%i.1] * f32(3.0)
@tilelang.jit
def scaled(N=WIDTH):
    half = qh.halve(N)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((half * 2,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            scale_into(A, B, N)
            qh.scale_into(A, C, half * 2)

    return main
