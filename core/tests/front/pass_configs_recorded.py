import tilelang
import tilelang.language as T


# CHECK: pass_configs={"tl.disable_warp_specialized": "True", "tl.enable_fast_math": "True"}
@tilelang.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True, "tl.disable_warp_specialized": True})
def fast(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = T.exp2(A[i])
    return main
