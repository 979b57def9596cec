# Helpers written with TVM's expression constructors, as TileLang's own
# dequantization helpers are.
from tilelang import language as T
from tilelang import tvm as tvm
from tvm import tirx


def low_bits(val, pos, nbit):
    mask = tirx.const((1 << nbit) - 1, T.uint8)
    field = (val >> (pos.astype(T.uint8) * tirx.const(nbit, T.uint8))) & mask
    return tirx.Cast(T.float32, field)


def bias():
    return tvm.tirx.const(1)
