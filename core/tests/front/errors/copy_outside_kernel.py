import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    T.copy(A, B)  # ERROR: T0308
