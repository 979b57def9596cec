import tilelang.language as T


# `T.cp_async_barrier_noinc(bar)`: each thread arrives on `bar` once its
# own `T.ptx_cp_async` copies are complete, and the arrival counts against
# the barrier's expected count. tilec's copies are complete at the next
# statement, so it is staged as the thread's `arrive`. The 128 arrivals
# complete phase 0 exactly (no arrival would leave the wait deadlocked, two
# per thread would complete phase 1 too and the wait for parity 0 would
# block), after which the tile is read.
# RUN-EQUAL: B = A
# CHECK: %S[
# CHECK: arrive %bar[0]
@T.prim_func
def noinc(A: T.Tensor((128, 4), "float32"), B: T.Tensor((128, 4), "float32")):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((128, 4), "float32")
        bar = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(S[tx, 0], "w", 4), T.access_ptr(A[tx, 0], "r", 4), 4)
        T.cp_async_barrier_noinc(bar[0])
        T.barrier_wait(bar[0], 0)
        T.copy(S, B)
