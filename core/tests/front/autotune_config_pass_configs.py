# An autotune configuration may carry `pass_configs`: not a builder
# parameter, but compiler settings the tuner merges over the jit's for that
# candidate. tilec builds the first configuration, with its pass configs.
# CHECK: tl.enable_fast_math
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def configs():
    return [
        {"block": b, "pass_configs": {"tl.enable_fast_math": True, "tl.disable_warp_specialized": ws}}
        for b in [32, 64]
        for ws in [True, False]
    ]


@autotune(configs=configs(), warmup=3, rep=10)
@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_tma_lower": True})
def tuned_with_pass_configs(N=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=32) as bx:
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
            T.copy(S, B[bx * block])

    return main
