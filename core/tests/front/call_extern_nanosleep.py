import tilelang
import tilelang.language as T
from tvm import tirx


# `call_extern("void", "__nanosleep", n)` only delays the calling thread:
# tilec leaves it out. Thread 0 writes after its delay; after the barrier
# thread 1 copies the value, so B ends equal to the -1 thread 0 wrote.
# RUN-EQUAL: B = C
@T.prim_func
def sleep_then_write(A: T.Tensor((1,), "int32"), B: T.Tensor((1,), "int32"), C: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=32):
        tx = T.get_thread_binding()
        if tx == 0:
            tirx.call_extern("void", "__nanosleep", 100)
            T.call_extern("void", "__nanosleep", 20)
            A[0] = -1
            C[0] = -1
        T.sync_threads()
        if tx == 1:
            B[0] = A[0]
