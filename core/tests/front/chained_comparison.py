# CHECK: if 8 <= %i && %i < 16 {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def chained_comparison(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                if 8 <= i < 16:
                    B[i] = A[i]

    return main
