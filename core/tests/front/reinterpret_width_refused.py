# A bit cast keeps the width: reading a float32's bits as a uint16, or a
# bool's bits at all, is refused at the call with what to write instead.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.uint16), C: T.Tensor((4,), T.int8)):
    with T.Kernel(1, threads=4) as bx:
        tx = T.get_thread_binding()
        B[tx] = T.reinterpret(A[tx], T.uint16)  # ERROR: T0300
        C[tx] = T.reinterpret(A[tx] > 0.0, T.int8)  # ERROR: T0300
