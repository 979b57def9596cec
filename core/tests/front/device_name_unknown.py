# The `apple` description lists no part, so it does not say which device
# `torch.cuda.get_device_name()` would name.
# TARGET: apple
import torch
import tilelang
import tilelang.language as T


@tilelang.jit
def by_device(M=256):
    name = torch.cuda.get_device_name(0)  # ERROR: T0111
    block = 32 if "Radeon" in name else 64

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M // block, threads=64) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i]

    return main
