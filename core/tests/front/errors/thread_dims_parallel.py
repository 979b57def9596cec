import tilelang.language as T


# A `T.Parallel` nest is a tile operation too.
@T.prim_func
def parallel_2d(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(32, 2)):
        for i in T.Parallel(64):  # ERROR: T0300
            B[i] = A[i]
