# RUN
# RUN-EQUAL: B = A
# A fragment written by a parallel nest under `if tx < 128:` in a block of
# 256 threads: the nest is the tile's, spread over the 128 threads that
# take the branch, so the whole fragment is written, and the copy after
# the `if`, by every thread, stores all of it.
import tilelang
import tilelang.language as T


@tilelang.jit
def guarded_fragment_nest(M=128, N=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block, M // block, threads=256) as (bx, by):
            F = T.alloc_fragment((block, block), "float16")
            tx = T.get_thread_binding(0)
            if tx < 128:
                for i, j in T.Parallel(block, block):
                    F[i, j] = A[by * block + i, bx * block + j]
            T.copy(F, B[by * block, bx * block])

    return main
