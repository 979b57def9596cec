# The warp-specialized attention form: copies at a negative stage, the
# consumers at stages 0 and 1 in a rotated order. This rotation would run
# `T.clear(s)` of one iteration before the gemm into `s` of the one
# before, so it is not followed: the loop is pipelined as without the
# lists, with a warning naming the buffer.
# CHECK: order=[0, 2, 4, 1, 3], stage=[-1, 0, 1, -1, 1]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def pipelined_groups_rotated(M=64, N=64, K=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), dtype)
            B_s = T.alloc_shared((32, 64), dtype)
            acc = T.alloc_fragment((64, 64), "float32")
            s = T.alloc_fragment((64, 64), "float32")
            T.clear(acc)
            for k in T.Pipelined(4, num_stages=2, order=[-1, 0, 2, 1], stage=[-1, 0, 1, 1], group=[[0, 3], [1], [2], [4]]):  # WARNING: W0001
                T.copy(A[0, k * 32], A_s)
                T.clear(s)
                T.gemm(A_s, B_s, s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[0, 0])

    return main
