# RUN
# RUN-EQUAL: B = A
# A barrier of count 1 that one thread arrives at, under `if tx == 0:`:
# the arrival counts that thread alone, so the phase completes once and
# the wait on parity 0 passes (a count of 128 would need every thread).
import tilelang
import tilelang.language as T


@tilelang.jit
def guarded_arrive(N=256, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=128) as bx:
            S = T.alloc_shared((block,), "float32")
            ready = T.alloc_barrier(1)
            T.tma_copy(A[bx * block], S, barrier=ready)
            if T.get_thread_binding() == 0:
                T.barrier_arrive(ready)
            T.barrier_wait(ready, 0)
            T.copy(S, B[bx * block])

    return main
