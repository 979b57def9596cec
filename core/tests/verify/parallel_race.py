# A row sum written as an element-wise loop: every column j of row i
# stores into the same element S[i], so once the iterations of the
# T.Parallel nest become threads, threads race on it (T.reduce is the
# right tool). The sequential reference interpreter computes the sum; the
# SIMT interpreter, running the lowered kernel, reports the race.
# REPLAY: race
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_sum(M=16, N=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((M,), "float32")
            T.clear(S)
            for i, j in T.Parallel(M, N):
                S[i] = S[i] + A[i, j]
            T.copy(S, B)

    return main
