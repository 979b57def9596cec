# `group` gives one `order`/`stage` entry to several statements: the lists
# are expanded to one entry per statement (ranks made distinct in program
# order). Copies at stage 0 and the gemm at 1 is a form the lowering
# follows, so there is no warning.
# CHECK: pipelined(0, 4, stages=2, order=[0, 1, 2], stage=[0, 0, 1])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def pipelined_groups(M=64, N=64, K=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), dtype)
            B_s = T.alloc_shared((32, 64), dtype)
            acc = T.alloc_fragment((64, 64), "float32")
            T.clear(acc)
            for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0, 1], [2]]):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[0, 0])

    return main
