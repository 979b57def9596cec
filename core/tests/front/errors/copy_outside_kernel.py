# A body that opens a `T.Kernel` and also has statements outside it is
# refused: TileLang runs those statements on the host. Only a body with no
# kernel at all runs as one thread of a single block.
import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    T.copy(A, B)  # ERROR: T0308
    with T.Kernel(1, threads=64) as bx:
        B[0] = 1.0
