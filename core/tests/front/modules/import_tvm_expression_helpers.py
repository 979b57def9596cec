# A helper module that builds expressions with `tirx.const` and `tirx.Cast`:
# typed constants and casts, the same as `T.cast`.
# RUN
import tilelang
import tilelang.language as T
from _nibble_helpers import bias, low_bits


# CHECK: %B[%i] = cast<f32>(cast<i32>(%A[%i // 2]) >> cast<i32>(cast<u8>(%i % 2)) * 4 & 15)
# CHECK: %C[%i] = %i + 1
@tilelang.jit
def unpack(N=16):
    @T.prim_func
    def main(A: T.Tensor((N // 2,), "uint8"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = low_bits(A[i // 2], i % 2, 4)
                C[i] = i + bias()

    return main
