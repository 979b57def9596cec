# `torch.cuda.mem_get_info()` is the free memory when the program runs: a
# size chosen from it has no compile-time value.
import torch
import tilelang
import tilelang.language as T


@tilelang.jit
def mem_get_info_refused(N=None):
    free, total = torch.cuda.mem_get_info()  # ERROR: T0111
    N = free // 1024

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(32):
                B[i] = A[i]

    return main
