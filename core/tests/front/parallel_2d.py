# CHECK: parallel (%i < 64, %j < 64) {
# CHECK: %B[%bx * 64 + %i, %j] = %A[%bx * 64 + %i, %j] * f16(2.0)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def parallel_2d(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            for i, j in T.Parallel(64, N):
                B[bx * 64 + i, j] = A[bx * 64 + i, j] * 2

    return main
