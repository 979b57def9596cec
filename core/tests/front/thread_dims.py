import tilelang.language as T


# Thread blocks of several dimensions: `threads=(x, y[, z])` launches
# x·y·z threads whose `T.get_thread_binding(d)` are threadIdx.x (fastest),
# y and z. Each thread writes its own ids; a one-thread kernel writes the
# expected ids with serial loops. A split-k sum over the y threads (their
# indices bound by `T.thread_binding` over each dimension's extent), whose
# partial sums meet in shared memory, must equal a serial sum.
# RUN-EQUAL: X = EX
# RUN-EQUAL: Y = EY
# RUN-EQUAL: S = ES
@T.prim_func
def thread_dims(
    X: T.Tensor((4, 32), "int32"),
    Y: T.Tensor((2, 2, 2, 4), "int32"),
    A: T.Tensor((16, 12), "int32"),
    S: T.Tensor((16,), "int32"),
    EX: T.Tensor((4, 32), "int32"),
    EY: T.Tensor((2, 2, 2, 4), "int32"),
    ES: T.Tensor((16,), "int32"),
):
    with T.Kernel(1, threads=(32, 4)):
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        tz = T.get_thread_binding(2)
        X[ty, tx] = tx + 100 * ty + 10000 * tz
    with T.Kernel(2, threads=(4, 2, 2)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        tz = T.get_thread_binding(2)
        Y[bx, tz, ty, tx] = tx + 10 * ty + 100 * tz + 1000 * bx
    with T.Kernel(2, threads=(8, 4)) as bn:
        tn = T.thread_binding(0, 8, thread="threadIdx.x")
        tk = T.thread_binding(0, 4, thread="threadIdx.y")
        part = T.alloc_shared((4, 8), "int32")
        part[tk, tn] = 0
        for kb in T.serial(3):
            part[tk, tn] = part[tk, tn] + A[bn * 8 + tn, kb * 4 + tk]
        T.sync_threads()
        if tk == 0:
            S[bn * 8 + tn] = part[0, tn] + part[1, tn] + part[2, tn] + part[3, tn]
    with T.Kernel(1, threads=1):
        for y in T.serial(4):
            for x in T.serial(32):
                EX[y, x] = x + 100 * y
        for b in T.serial(2):
            for z in T.serial(2):
                for y in T.serial(2):
                    for x in T.serial(4):
                        EY[b, z, y, x] = x + 10 * y + 100 * z + 1000 * b
        for n in T.serial(16):
            ES[n] = 0
            for k in T.serial(12):
                ES[n] = ES[n] + A[n, k]
