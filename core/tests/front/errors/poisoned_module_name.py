import tilelang
import tilelang.language as T

import torch

BLOCK = torch.cuda.get_device_properties(0).multi_processor_count


@T.prim_func
def uses(A: T.Tensor((64,), "float32")):
    with T.Kernel(BLOCK, threads=64) as bx:  # ERROR: T0108
        A[0] = 1.0
