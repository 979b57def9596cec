"""Per-thread code: each thread handles its own element.

`T.get_thread_binding()` gives the thread's index; stores through it are
made by every thread, one element each. A block of `threads` threads
reverses its slice of A through shared memory (the barrier between the
stores and the loads is the compiler's to place), and a thread range
writes a second output.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def per_thread(N=256, threads=64, dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((N,), dtype),
        B: T.Tensor((N,), dtype),
        D: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
            S = T.alloc_shared((threads,), dtype)
            tx = T.get_thread_binding()
            S[tx] = A[bx * threads + tx]
            T.sync_threads()
            B[bx * threads + tx] = S[threads - 1 - tx]
            D[bx * threads + tx] = 0
            if tx >= threads // 4 and tx < threads // 2:
                D[bx * threads + tx] = S[tx] + 1

    return main
