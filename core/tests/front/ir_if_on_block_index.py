# CHECK: if %bx == 0 {
# CHECK: } else {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ir_if_on_block_index(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            if bx == 0:
                T.clear(A[0:64, :])
            else:
                for i in T.Parallel(64):
                    B[bx * 64 + i, 0] = 1

    return main
