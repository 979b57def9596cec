# A store to a reducer that is not an accumulation with its op is refused at the store.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_plain_store(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="max", replication="all")
            T.clear(s)
            for i, j in T.Parallel(M, N):
                s[i] = s[i] + F[i, j]  # ERROR: T0300
            T.finalize_reducer(s)
            T.copy(s, B)

    return main
