# Misused aliases and hints.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def vocab_hint_misuse(M=4, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((M, N), "int32")
            S = T.alloc_fragment((M,), "int32")
            T.copy(A, F)
            T.reduce_sum(F, S, dim=1, batch=0)  # ERROR: T0309
            T.annotate_min_blocks_per_sm(0)  # ERROR: T0309
            T.pdl_trigger(1)  # ERROR: T0102
            for i, j in T.grid(M):  # ERROR: T0309
                S[i] = j
            for i in T.Parallel(M):
                B[i] = T.__exp(S[i])  # ERROR: T0309

    return main
