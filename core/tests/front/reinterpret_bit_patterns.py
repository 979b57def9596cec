# `T.reinterpret(value, dtype)` reads a value's bits as another type of the
# same width. The run compares the bits with constants worked out by hand
# (IEEE encodings), a quiet NaN's payload survives a round trip through a
# float buffer, and the deprecated (dtype, value) order and TVM's
# `tirx.reinterpret(dtype, value)` mean the same.
# RUN-EQUAL: Bits32 = Want32
# RUN-EQUAL: Bits16 = Want16
# RUN-EQUAL: Bits64 = Want64
# RUN-EQUAL: Back = A
# CHECK: bitcast<u32>(
# CHECK: bitcast<f32>(
import tilelang
import tilelang.language as T
from tvm import tirx


@T.prim_func
def main(
    A: T.Tensor((8,), T.float32),
    Back: T.Tensor((8,), T.float32),
    Bits32: T.Tensor((7,), T.uint32),
    Want32: T.Tensor((7,), T.uint32),
    Bits16: T.Tensor((4,), T.int16),
    Want16: T.Tensor((4,), T.int16),
    Bits64: T.Tensor((2,), T.int64),
    Want64: T.Tensor((2,), T.int64),
):
    with T.Kernel(1, threads=8) as bx:
        tx = T.get_thread_binding()
        F = T.alloc_local((4,), T.float32)
        H = T.alloc_local((2,), T.float16)
        B = T.alloc_local((2,), T.bfloat16)
        D = T.alloc_local((2,), T.float64)
        U = T.alloc_local((2,), T.uint32)
        F[0] = 1.0
        F[1] = -0.0
        F[2] = -2.5
        U[0] = T.uint32(0x7FC01234)
        U[1] = T.uint32(0xFFC00001)
        # Through a float buffer: the NaN's payload is kept.
        F[3] = T.reinterpret(U[0], T.float32)
        H[0] = 1.0
        H[1] = -2.0
        B[0] = 1.0
        B[1] = -0.0
        D[0] = 1.0
        D[1] = -2.0
        Back[tx] = T.reinterpret(T.reinterpret(A[tx], T.uint32), T.float32)
        if tx == 0:
            Bits32[0] = T.reinterpret(F[0], T.uint32)
            Bits32[1] = T.reinterpret(F[1], T.uint32)
            Bits32[2] = T.reinterpret(F[2], T.uint32)
            Bits32[3] = T.reinterpret(F[3], T.uint32)
            Bits32[4] = T.reinterpret(T.reinterpret(U[1], T.float32), T.uint32)
            Bits32[5] = T.reinterpret(T.uint32, F[2])
            Bits32[6] = T.Cast(T.uint32, tirx.reinterpret(T.int32, F[0]) + 1)
            Want32[0] = T.uint32(0x3F800000)
            Want32[1] = T.uint32(0x80000000)
            Want32[2] = T.uint32(0xC0200000)
            Want32[3] = T.uint32(0x7FC01234)
            Want32[4] = T.uint32(0xFFC00001)
            Want32[5] = T.uint32(0xC0200000)
            Want32[6] = T.uint32(0x3F800001)
            Bits16[0] = T.reinterpret(H[0], T.int16)
            Bits16[1] = T.reinterpret(H[1], T.int16)
            Bits16[2] = T.reinterpret(B[0], T.int16)
            Bits16[3] = T.reinterpret(B[1], T.int16)
            Want16[0] = T.int16(0x3C00)
            Want16[1] = T.int16(-16384)
            Want16[2] = T.int16(0x3F80)
            Want16[3] = T.int16(-32768)
            Bits64[0] = T.reinterpret(D[0], T.int64)
            Bits64[1] = T.reinterpret(D[1], T.int64)
            Want64[0] = T.int64(4607182418800017408)
            Want64[1] = T.int64(-4611686018427387904)
