import tilelang
import tilelang.language as T


# Indices that would leave a buffer are fine where a condition guards them
# (an `if` inside the parallel loop, or an arm of `T.if_then_else`), and
# index arithmetic that stays inside is accepted.
# RUN
@T.prim_func
def guarded(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        head = T.alloc_fragment((16,), "float32")
        for i in T.Parallel(64):
            if i < 16:
                head[i] = A[i]
        S = T.alloc_shared((64,), "float32")
        T.copy(A, S)
        for i in T.Parallel(64):
            B[i] = T.if_then_else(i < 63, S[i + 1], S[0]) + S[63 - i] + S[(i * 3) % 64]
