import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def undefined_name(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * scale_factor  # ERROR: T0101

    return main
