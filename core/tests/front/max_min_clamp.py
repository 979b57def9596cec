# CHECK: max(%A[%i], f32(0.0)) + min(%A[%i], f32(1.0)) + min(max(%A[%i], f32(-2.0)), f32(2.0))
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def max_min_clamp(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.max(A[i], 0) + T.min(A[i], 1.0) + T.clamp(A[i], -2, 2)

    return main
