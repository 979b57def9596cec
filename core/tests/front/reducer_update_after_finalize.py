# T.reducer_update after T.finalize_reducer (without a new T.reducer_init) is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_update_after_finalize(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="min")
            T.reducer_init(s)
            T.finalize_reducer(s)
            for i, j in T.Parallel(M, N):
                T.reducer_update(s[i], F[i, j])  # ERROR: T0300
            T.copy(s, B)

    return main
