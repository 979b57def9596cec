# A write to a build-time tensor (here an item store) forgets its values:
# reading one afterwards is refused.
import torch
import tilelang
import tilelang.language as T

COUNTS = torch.zeros(4, dtype=torch.int32)
COUNTS[0] = 7


@tilelang.jit
def sized(K=64):
    M = COUNTS[0].item()  # ERROR: T0112

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((M, K), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B)

    return main
