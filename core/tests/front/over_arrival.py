# Every thread of a 32-thread block arrives at a barrier of count 1: the
# statement completes 32 phases, not one, so the wait for parity 0 after
# it may never pass. Accepted as TileLang accepts it, with W0004 at the
# arrive; the arrive of one thread, and a count equal to the block's
# threads, draw no warning.
import tilelang
import tilelang.language as T


@tilelang.jit
def over_arrival(N=256, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=32) as bx:
            S = T.alloc_shared((block,), "float32")
            one = T.alloc_barrier(1)
            every = T.alloc_barrier(32)
            T.copy(A[bx * block], S)
            T.barrier_arrive(one)  # WARNING: W0004
            T.barrier_arrive(every)
            if T.get_thread_binding() == 0:
                T.barrier_arrive(one)
            T.barrier_wait(every, 0)
            T.copy(S, B[bx * block])

    return main
