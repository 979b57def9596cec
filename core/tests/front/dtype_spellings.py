import tilelang
import tilelang.language as T


import torch

# CHECK: func @main(%A: global f16[8], %B: global f16[8], %C: global bf16[8], %D: global f32[8])
@tilelang.jit(out_idx=[-1])
def spellings(N=8):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), torch.bfloat16), D: T.Tensor((N,), "float")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                D[i] = A[i] + B[i] + C[i]
    return main
