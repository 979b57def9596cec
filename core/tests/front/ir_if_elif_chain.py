# CHECK: if %i < 16 {
# CHECK: } else {
# CHECK: if %i < 32 {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ir_if_elif_chain(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            for i in T.Parallel(64):
                if i < 16:
                    B[bx * 64 + i, 0] = 1
                elif i < 32:
                    B[bx * 64 + i, 0] = 2
                else:
                    B[bx * 64 + i, 0] = 3

    return main
