# `T.Pipelined` with `stage` and `order` but no `num_stages`: the depth is
# one more than the largest stage (two here), so the lists are followed
# (copies at stage 0 loaded one iteration ahead of the gemm at stage 1).
# With FA3's negative producer stages the largest stage still decides.
# CHECK: pipelined(0, 8, stages=2, order=[0, 1, 2], stage=[0, 0, 1])
# CHECK: pipelined(0, 8, stages=3, order=[0, 1, 2], stage=[0, 0, 2])
# CHECK: pipelined(0, 8, stages=2, order=[0, 2, 1], stage=[-1, 1, -1])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def inferred_depth(M=64, N=64, K=256, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), dtype)
            B_s = T.alloc_shared((32, 64), dtype)
            acc = T.alloc_fragment((64, 64), "float32")
            T.clear(acc)
            for k in T.Pipelined(8, stage=[0, 0, 1], order=[0, 1, 2]):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Pipelined(8, stage=[0, 0, 2], order=[0, 1, 2]):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Pipelined(8, stage=[-1, 1, -1], order=[0, 2, 1]):
                T.copy(A[0, k * 32], A_s)
                T.gemm(A_s, B_s, acc)
                T.copy(B[k * 32, 0], B_s)
            T.copy(acc, C[0, 0])

    return main
