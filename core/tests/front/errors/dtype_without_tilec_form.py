# TensorFloat-32 and 4-bit integers are dtypes tilec does not have.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def dtype_without_tilec_form(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.tfloat32), B: T.Tensor((N,), "float32")):  # ERROR: T0300
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
