# DEFINE: N=16
# CHECK: %A: global f32[16]
# CHECK: parallel (%i < 16)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def define_overrides_default(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
