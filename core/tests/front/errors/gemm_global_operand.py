import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        Bs = T.alloc_shared((32, 64), "float16")
        C = T.alloc_fragment((64, 64), "float32")
        T.copy(B, Bs)
        T.gemm(A, Bs, C)  # ERROR: T0303
