import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def too_many_indices(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            B[0, 1] = A[0]  # ERROR: T0311

    return main
