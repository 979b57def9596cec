# T.clamp needs both bounds.
import tilelang
import tilelang.language as T


@tilelang.jit
def clamp_missing_bound(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.clamp(A[i], min_val=0.5)  # ERROR: T0102

    return main
