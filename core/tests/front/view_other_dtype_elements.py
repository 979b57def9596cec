# `T.view(buf, shape, dtype)` of the same width under another element type:
# its elements are the buffer's bits read (and written) as that type. A
# float32 buffer seen as uint32 gives the IEEE encodings; writing through a
# uint32 view of a float32 buffer (an augmented assignment) flips the sign
# bit.
# RUN-EQUAL: Bits = Want
# RUN-EQUAL: Neg = NegA
# CHECK: bitcast<u32>(%F[
# CHECK: bitcast<f32>(
import tilelang.language as T


@T.prim_func
def main(
    A: T.Tensor((4,), T.float32),
    Neg: T.Tensor((4,), T.float32),
    NegA: T.Tensor((4,), T.float32),
    Bits: T.Tensor((4,), T.uint32),
    Want: T.Tensor((4,), T.uint32),
):
    with T.Kernel(1, threads=4) as bx:
        tx = T.get_thread_binding()
        F = T.alloc_shared((4,), T.float32)
        U = T.view(F, (4,), T.uint32)
        F[tx] = T.Cast(T.float32, tx) * 0.5 - 0.5
        T.sync_threads()
        Bits[tx] = U[tx]
        Want[tx] = T.reinterpret(F[tx], T.uint32)
        T.sync_threads()
        W = T.view(Neg, dtype=T.uint32)
        Neg[tx] = A[tx]
        W[tx] ^= T.uint32(0x80000000)
        NegA[tx] = -A[tx]
