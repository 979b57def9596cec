# RUN
# `T.tma_copy` is a copy: a load the user completes with an arrive and a
# wait on its barrier, a store with `T.tma_store_wait`. Each is staged as
# `copy`, which is complete before the next statement, so the arrive and
# the wait stay as written. `T.async_copy` is staged as `copy` too.
# CHECK: copy %A[
# CHECK: arrive %ready[0]
# CHECK: wait %ready[0] parity 0
# CHECK: copy %S
# CHECK: copy %A[
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tma_copy_as_copy(N=256, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=128) as bx:
            S = T.alloc_shared((block,), "float32")
            R = T.alloc_shared((block,), "float32")
            ready = T.alloc_barrier(128)
            T.tma_copy(A[bx * block], S, barrier=ready)
            T.barrier_arrive(ready)
            T.barrier_wait(ready, 0)
            T.tma_copy(S, B[bx * block : (bx + 1) * block])
            T.tma_store_wait()
            T.async_copy(A[bx * block], R)
            for i in T.Parallel(block):
                R[i] = R[i] * 2.0
            T.copy(R, B[bx * block])

    return main
