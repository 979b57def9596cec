# 4-bit integers are a dtype tilec does not have (TensorFloat-32 is staged
# as float32, see tfloat32_as_float32.py).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def dtype_without_tilec_form(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.int4), B: T.Tensor((N,), "float32")):  # ERROR: T0300
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
