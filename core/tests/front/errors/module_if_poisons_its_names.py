import tilelang
import tilelang.language as T

import torch

if torch.cuda.is_available():
    BLOCK = 128
else:
    BLOCK = 64


@T.prim_func
def uses(A: T.Tensor((BLOCK,), "float32")):  # ERROR: T0108
    with T.Kernel(1, threads=64) as bx:
        A[0] = 1.0
