import tilelang
import tilelang.language as T


# `tilelang.PassConfigKey` members are the strings they stand for, so the
# configs tilec reads are recognised whichever way they are spelled.
# CHECK: pass_configs={"tl.disable_warp_specialized": "True", "tl.enable_fast_math": "True"}
@tilelang.jit(
    out_idx=[-1],
    pass_configs={
        tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    },
)
def fast(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.exp2(A[i])

    return main
