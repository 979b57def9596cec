# CHECK: for %k in pipelined(0, 4, stages=3) {
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def pipelined_stages(M=128, N=64, K=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, 32), dtype)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
                T.copy(A[bx * 64, k * 32], S)

    return main
