# The `else` of `tx == 0` runs on every other thread: an element atomic
# there would be added by each of them on TileLang, so tilec refuses it.
import tilelang
import tilelang.language as T


@T.prim_func
def counted(B: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding(0)
        if tx == 0:
            T.atomic_add(B[0], 1)
        else:
            T.atomic_add(B[0], 2)  # ERROR: T0300
