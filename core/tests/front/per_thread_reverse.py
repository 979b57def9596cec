import tilelang
import tilelang.language as T


# Per-thread code at the block's own level: every thread stores its own
# two elements of a shared tile, and after the barrier reads their mirror
# images; a serial loop over a per-thread slice and an `if` on a block value
# around per-thread stores run once per thread too. Reversing twice gives
# back the input.
# RUN-EQUAL: C = A
@T.prim_func
def reverse_twice(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32"), C: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=64) as bx:
        S = T.alloc_shared((128,), "float32")
        tx = T.get_thread_binding()
        for k in T.serial(2):
            S[tx * 2 + k] = A[bx * 128 + tx * 2 + k]
        T.sync_threads()
        for k in T.serial(2):
            B[bx * 128 + tx * 2 + k] = S[127 - tx * 2 - k]
        T.sync_threads()
        if bx < 2:
            for k in T.serial(2):
                C[bx * 128 + 127 - tx * 2 - k] = B[bx * 128 + tx * 2 + k]
