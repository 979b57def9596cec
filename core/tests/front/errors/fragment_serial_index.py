import tilelang
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64,), "float32"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((64, 64), "float32")
        for k in T.serial(64):
            for i in T.Parallel(64):
                F[i, k] = A[i]  # ERROR: T0305
        T.copy(F, B)
