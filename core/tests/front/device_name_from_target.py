# RUN
# `torch.cuda.get_device_name()` is the name the driver reports for the
# compile target's one part: a file that picks its tile sizes from it
# builds for that device.
# TARGET: gfx942
# CHECK: kernel grid(4)
import torch
import tilelang
import tilelang.language as T

NAME = torch.cuda.get_device_name().strip()
PROPS_NAME = torch.cuda.get_device_properties(0).name
BLOCK = 32 if "Radeon" in NAME else 64


@tilelang.jit
def by_device(M=256):
    assert NAME == PROPS_NAME and NAME.startswith("AMD Instinct")

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M // BLOCK, threads=64) as bx:
            for i in T.Parallel(BLOCK):
                B[bx * BLOCK + i] = A[bx * BLOCK + i]

    return main
