# A reducer read inside the nest that accumulates into it (here in the contribution) is refused at the read: the partial sums of the nest have no TileLang meaning.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_read_in_nest(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="sum", replication="all")
            T.clear(s)
            for i, j in T.Parallel(M, N):
                s[i] += F[i, j] * s[i]  # ERROR: T0300
            T.finalize_reducer(s)
            T.copy(s, B)

    return main
