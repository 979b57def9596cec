# RUN
# RUN-EQUAL: B = A
# `T.ptx_cp_async` is one thread's copy of `n` consecutive elements in
# memory, from the element a `T.access_ptr` names on. Each thread here
# copies two rows of A (16 elements from `A[2 * tx, 0]`) into one row of
# the shared tile; the copy is complete at the statement after it, so the
# commit and the wait are kept as nothing.
# CHECK: %S[(%tx * 16 + 15) // 16, (%tx * 16 + 15) % 16] = %A[
# CHECK: barrier
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ptx_cp_async_chunks(rows=32, cols=8):
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "float32"), B: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=16):
            S = T.alloc_shared((16, 16), "float32")
            tx = T.get_thread_binding()
            T.ptx_cp_async(
                T.access_ptr(S[tx, 0], "w", 16),
                T.access_ptr(A[2 * tx, 0], "r", 16),
                16,
            )
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            T.sync_threads()
            for i, j in T.Parallel(rows, cols):
                B[i, j] = S[(i * cols + j) // 16, (i * cols + j) % 16]

    return main
