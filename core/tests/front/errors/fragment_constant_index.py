import tilelang
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 8), "float32"), B: T.Tensor((64, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((64, 8), "float32")
        T.fill(F, 0.0)
        for i in T.Parallel(64):
            F[i, 3] = A[i, 0]  # ERROR: T0305
        T.copy(F, B)
