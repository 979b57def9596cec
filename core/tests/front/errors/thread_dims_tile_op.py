import tilelang.language as T


# TileLang spreads a tile operation over the threadIdx.x threads only and
# repeats it for every threadIdx.y; with several thread dimensions tilec
# refuses tile operations at their line instead of spreading them over all
# threads.
@T.prim_func
def tile_op_2d(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(32, 2)):
        S = T.alloc_shared((64,), "float32")
        T.copy(A, S)  # ERROR: T0300
        for i in T.Parallel(64):
            B[i] = S[i]

