import tilelang
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 8), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((64, 8), "float32")
        T.copy(A, F)
        for i in T.Parallel(64):
            B[i] = F[i, 3]  # ERROR: T0305
