# Without `@tilelang.jit` under `@autotune` there is no compile to give a
# configuration's `pass_configs` to: refused, saying where to put them.
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


@autotune(configs=[{"block": 32, "pass_configs": {"tl.enable_fast_math": True}}], warmup=3, rep=10)
def plain_builder(N=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=32) as bx:
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
            T.copy(S, B[bx * block])

    return main
# ERROR-ANYWHERE: T0300
