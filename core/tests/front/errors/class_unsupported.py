import tilelang
import tilelang.language as T

class Config(metaclass=type):  # reported where it is used
    block = 64


@T.prim_func
def uses(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        A[0] = Config.block  # ERROR: T0108
