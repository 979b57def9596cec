# A condition on a tensor takes its one element: a random one (after an
# in-place `uniform_`) has no compile-time truth value.
import torch
import tilelang
import tilelang.language as T

NOISE = torch.zeros(1).uniform_(0, 1)


@tilelang.jit
def pick(K=64):
    if NOISE > 0.5:  # ERROR: T0112
        K = 32

    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), B: T.Tensor((K,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B)

    return main
