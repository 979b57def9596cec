import tilelang
import tilelang.language as T


# Per-row int8 quantisation of 4 rows of 8192 columns in one block of 128
# threads: a float32 fragment of the absolute values, the rows' scales and
# an int8 fragment of the quantised values. Too large for shared memory
# together; the large fragments are spread over the threads in per-thread
# arrays (spilled by the backend), as TileLang keeps them.
# RUN
@T.prim_func
def quant_rows(X: T.Tensor((4, 8192), "float32"), Q: T.Tensor((4, 8192), "int8"), S: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((4, 8192), "float32")
        ax = T.alloc_fragment((4, 8192), "float32")
        amax = T.alloc_fragment((4,), "float32")
        q = T.alloc_fragment((4, 8192), "int8")
        T.copy(X[0, 0], x)
        for i, j in T.Parallel(4, 8192):
            ax[i, j] = T.abs(x[i, j])
        T.reduce_max(ax, amax, dim=1)
        for i in T.Parallel(4):
            amax[i] = T.max(amax[i], 1e-8) / 127.0
        for i, j in T.Parallel(4, 8192):
            q[i, j] = T.cast(T.clamp(T.round(x[i, j] / amax[i]), -127.0, 127.0), "int8")
        T.copy(q, Q[0, 0])
        for i in T.Parallel(4):
            S[i] = amax[i]
