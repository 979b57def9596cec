# RUN
# Aliases and hints: `T.Serial` is `T.serial`, `T.Select` is
# `T.if_then_else`, `T.__exp` is `T.exp`, `T.isfinite(x)` is neither NaN
# nor infinite; programmatic-launch calls, `T.annotate_restrict_buffers`,
# `T.annotate_min_blocks_per_sm`, a reduction's `batch`, `nan_propagate`
# and `annotations`, and a copy's `annotations` change no result.
# CHECK: for %k in serial
# CHECK: parallel
# CHECK: select(!(isnan(
# CHECK: exp(
# CHECK: reduce sum
# CHECK: reduce max
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def vocab_hints_and_aliases(M=4, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        T.annotate_restrict_buffers(A, B)
        with T.Kernel(1, threads=128) as bx:
            T.annotate_min_blocks_per_sm(2)
            T.pdl_sync()
            F = T.alloc_fragment((M, N), "float32")
            S = T.alloc_fragment((M,), "float32")
            X = T.alloc_fragment((M,), "float32")
            T.copy(A, F, annotations={"prefer_instruction": "tma"})
            for k in T.Serial(2):
                for i, j in T.Parallel(M, N):
                    F[i, j] = T.Select(T.isfinite(F[i, j]), T.__exp(F[i, j]) * 0.5, 0.0)
            T.reduce_sum(F, S, dim=1, batch=2, annotations={"enable_fadd2": False})
            T.reduce_max(F, X, dim=1, nan_propagate=True)
            for i in T.Parallel(M):
                B[i] = S[i] + X[i]
            T.pdl_trigger()

    return main
