# A reducer element chosen by a computed index (not a loop variable of the nest) is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_computed_index(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="sum")
            T.reducer_init(s)
            for i, j in T.Parallel(M, N):
                T.reducer_update(s[(i + 1) % M], F[i, j])  # ERROR: T0300
            T.finalize_reducer(s)
            T.copy(s, B)

    return main
