# The values of a random tensor are not known at compile time: a size
# read from them is refused, not guessed.
import torch
import tilelang
import tilelang.language as T

S = torch.randn(4, device="cuda")


@tilelang.jit
def sized_by_values(K=64):
    M = int(S.sum())  # ERROR: T0112

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((M, K), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B)

    return main
