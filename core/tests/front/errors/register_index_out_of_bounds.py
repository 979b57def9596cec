import tilelang
import tilelang.language as T


@T.prim_func
def past_the_end(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        # A per-row value kept in a fragment declared too small: rows 16..63
        # of the parallel loop land outside it.
        row_bias = T.alloc_fragment((16,), "float32")
        for i in T.Parallel(64):
            row_bias[i] = A[0]  # ERROR: T0313
        # A fragment read past its end through an offset index; the shared
        # read past the end is left to the run-time check and `tilec verify`.
        S = T.alloc_shared((64,), "float32")
        F = T.alloc_fragment((64,), "float32")
        T.copy(A, S)
        T.copy(A, F)
        for i in T.Parallel(64):
            B[i] = F[i + 1] + row_bias[i // 4] + S[i + 1]  # ERROR: T0313
        # A constant index past the end of a local array.
        acc = T.alloc_local((4,), "float32")
        acc[4] = 1.0  # ERROR: T0313
        B[0] = acc[0]
