import tilelang.language as T


# With `threads=(32, 2)`, threadIdx.x ranges over 32 threads: binding it
# over all 64 names no TileLang thread index.
@T.prim_func
def binding_extent(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(32, 2)):
        t = T.thread_binding(0, 64, thread="threadIdx.x")  # ERROR: T0300
        A[t] = 0.0
