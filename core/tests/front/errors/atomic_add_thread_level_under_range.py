# An element atomic under `if tx < 32:` is added once by each of the 32
# threads on TileLang; tilec refuses it rather than add once.
import tilelang
import tilelang.language as T


@T.prim_func
def counted(B: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding(0)
        if tx < 32:
            T.atomic_add(B[0], 1)  # ERROR: T0300
        else:
            B[0] = 0
