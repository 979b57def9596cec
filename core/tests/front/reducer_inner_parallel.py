# An accumulation into a reducer from a nested T.Parallel is refused: the inner iterations would update one element of the outer nest at once.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_inner_parallel(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="sum", replication="all")
            T.clear(s)
            for i in T.Parallel(M):
                for j in T.Parallel(N):
                    s[i] += F[i, j]  # ERROR: T0300
            T.finalize_reducer(s)
            T.copy(s, B)

    return main
