# CHECK: for %k in unroll(0, 4) {
# CHECK: for %v in vectorized(0, 8) {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def unroll_and_vectorized(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            for k in T.unroll(4):
                for v in T.vectorized(8):
                    B[bx * 64 + k, v] = A[bx * 64 + k, v]

    return main
