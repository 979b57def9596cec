import tilelang.language as T


# Thread dimensions are 0, 1 and 2 (threadIdx.x, y, z).
@T.prim_func
def bad_dim(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(32, 2)):
        t = T.get_thread_binding(3)  # ERROR: T0309
        A[t] = 0.0
