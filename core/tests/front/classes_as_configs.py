# RUN
"""Classes as build-time configs: class attributes, __init__, methods,
properties, static and class methods, dataclasses, super()."""
# CHECK: f32[96]
# CHECK: kernel grid(3) threads(64)
# CHECK: f32(8.0)
from dataclasses import dataclass

import tilelang
import tilelang.language as T

DOC = __doc__.split(":")[0]


class Defaults:
    threads = 64

    @staticmethod
    def scale():
        return 2

    @classmethod
    def doubled(cls):
        return cls.threads * 2


class Tiles(Defaults):
    def __init__(self, n, block=32):
        super(Tiles, self).__init__()
        self.n = n
        self.block = block

    def grid(self):
        return (self.n + self.block - 1) // self.block

    @property
    def padded(self):
        return self.grid() * self.block


@dataclass
class Extra:
    value: float
    times: int = 4


@tilelang.jit
def configured(N=70):
    tiles = Tiles(N)
    extra = Extra(1.0, times=Defaults.scale() * 4)
    assert Defaults.doubled() == 128 and DOC.startswith("Classes")
    assert N in {70, 140} and 3 not in {1, 2}

    @T.prim_func
    def main(A: T.Tensor((tiles.padded,), "float32")):
        with T.Kernel(tiles.grid(), threads=tiles.threads) as bx:
            A[bx] = extra.value * extra.times

    return main
