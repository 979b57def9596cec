# CHECK: for %k in serial(0, 4) {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def serial_loop(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            for k in T.serial(4):
                for i in T.Parallel(64):
                    B[bx * 64 + i, k] = A[bx * 64 + i, k]

    return main
