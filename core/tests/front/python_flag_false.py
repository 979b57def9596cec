import tilelang
import tilelang.language as T


# CHECK: parallel
# CHECK-NOT: select
@tilelang.jit(out_idx=[-1])
def masked(M=64, N=64, is_causal=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(M, N):
                if is_causal:
                    B[i, j] = T.if_then_else(i >= j, A[i, j], 0)
                else:
                    B[i, j] = A[i, j]
    return main
