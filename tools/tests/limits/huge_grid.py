# A grid of 2^40 blocks.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def huge_grid(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(2**40, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]
    return main
