import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy(N=64):
    @T.prim_func
    def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
        with T.Kernel(2, 2, threads=64) as (bx, by):
            T.use_swizzle(4, order="diagonal")  # ERROR: T0309
            B[by, bx] = A[by, bx]

    return main
