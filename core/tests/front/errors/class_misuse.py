# Errors of build-time classes name what is wrong.
from dataclasses import dataclass

import tilelang
import tilelang.language as T


@dataclass
class Shape:
    n: int
    block: int = 32


class Plain:
    pass


@T.prim_func
def misuse(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        a = Shape()  # ERROR: T0102
        b = Plain().missing  # ERROR: T0104
        c = Plain(3)  # ERROR: T0102
        d = (5).missing  # ERROR: T0104
        e = super()  # ERROR: T0100
        A[bx] = 0.0
