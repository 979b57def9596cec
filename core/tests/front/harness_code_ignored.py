import tilelang
import tilelang.language as T


import torch
import numpy as np

# CHECK: func @main
torch.manual_seed(0)
ref = torch.randn(16, device="cuda")


@tilelang.jit(out_idx=[-1])
def copy_kernel(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main


def main():
    kernel = copy_kernel()
    a = torch.randn(16, device="cuda")
    torch.testing.assert_close(kernel(a), a)


if __name__ == "__main__":
    main()
