import tilelang
import tilelang.language as T


# Row-wise layer normalisation of 4 rows of 8192 columns in one block of
# 128 threads: the two (4, 8192) float32 fragments take 256 KiB, more than
# any target's shared memory, and 256 elements per thread, more than the
# register budget. TileLang keeps fragments in registers whatever their
# size and lets the backend spill; the lowering does the same as its last
# resort, in per-thread arrays. The interpreter checks the normalisation.
# RUN
@T.prim_func
def layernorm(A: T.Tensor((4, 8192), "float32"), B: T.Tensor((4, 8192), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment((4, 8192), "float32")
        sq = T.alloc_fragment((4, 8192), "float32")
        mean = T.alloc_fragment((4,), "float32")
        rstd = T.alloc_fragment((4,), "float32")
        T.copy(A[0, 0], a)
        T.reduce_sum(a, mean, dim=1)
        for i in T.Parallel(4):
            mean[i] = mean[i] / 8192.0
        for i, j in T.Parallel(4, 8192):
            sq[i, j] = (a[i, j] - mean[i]) * (a[i, j] - mean[i])
        T.reduce_sum(sq, rstd, dim=1)
        for i in T.Parallel(4):
            rstd[i] = T.rsqrt(rstd[i] / 8192.0 + 1e-5)
        for i, j in T.Parallel(4, 8192):
            a[i, j] = (a[i, j] - mean[i]) * rstd[i]
        T.copy(a, B[0, 0])
