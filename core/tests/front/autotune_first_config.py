import tilelang
import tilelang.language as T


import itertools
from tilelang.autotuner import autotune

# CHECK: alloc %S: shared f32[32]
def configs():
    return [{"block": b, "threads": t} for b, t in itertools.product([32, 64], [128, 256])]


@autotune(configs=configs(), warmup=3, rep=10)
@tilelang.jit(out_idx=[-1])
def tuned(N=128, block=None, threads=None):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=threads) as bx:
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
            T.copy(S, B[bx * block])
    return main
