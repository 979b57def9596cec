# CHECK: pipelined(0, 4, stages=2, order=[0, 1], stage=[0, 1])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def pipelined_order_stage(M=128, N=64, K=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, 32), dtype)
            F = T.alloc_fragment((64, 32), dtype)
            for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1]):
                T.copy(A[bx * 64, k * 32], S)
                T.copy(S, F)

    return main
