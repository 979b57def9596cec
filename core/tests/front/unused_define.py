import tilelang
import tilelang.language as T

# DEFINE: NOT_A_PARAMETER=3
# WARNING-ANYWHERE: W0001
@tilelang.jit(out_idx=[-1])
def copy_kernel(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main
