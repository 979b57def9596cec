import tilelang
import tilelang.language as T


# `T.alloc_local` and `T.alloc_var` buffers are per thread in TileLang: each
# thread accumulates its own row into `acc` and keeps its own `tmp`,
# doubled only by the threads under the guard. The same results computed
# with a tile reduction and a parallel nest must agree exactly (int32).
# RUN-EQUAL: B = C
# RUN-EQUAL: D = E
@T.prim_func
def per_thread(A: T.Tensor((128, 64), "int32"), B: T.Tensor((128,), "int32"), C: T.Tensor((128,), "int32"), D: T.Tensor((128,), "int32"), E: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        acc = T.alloc_local((1,), "int32")
        tmp = T.alloc_var("int32")
        T.clear(acc)
        for k in T.serial(64):
            acc[0] += A[tx, k]
        B[tx] = acc[0]
        tmp = A[tx, 3]
        if tx < 64:
            tmp = tmp * 2
        D[tx] = tmp
        a = T.alloc_fragment((128, 64), "int32")
        c = T.alloc_fragment((128,), "int32")
        T.copy(A, a)
        T.reduce_sum(a, c, dim=1)
        T.copy(c, C)
        for i in T.Parallel(128):
            E[i] = T.if_then_else(i < 64, A[i, 3] * 2, A[i, 3])
