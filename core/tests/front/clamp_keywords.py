# The bounds of T.clamp may be given by keyword, as TileLang names them.
# CHECK: %B[%i] = min(max(%A[%i], f32(0.5)), f32(2.0))
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def clamp_keywords(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.clamp(A[i], min_val=0.5, max_val=2.0)
                C[i] = T.min(T.max(A[i], 0.5), 2.0)

    return main
