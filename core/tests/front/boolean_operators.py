# CHECK: if %i > 2 && %i < 10 || !(%i != 40) {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def boolean_operators(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                if (i > 2 and i < 10) or not (i != 40):
                    B[i] = A[i]

    return main
