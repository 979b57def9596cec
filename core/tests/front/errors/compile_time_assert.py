import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def checked(N=60, block=16):
    assert N % block == 0, "N must be a multiple of block"  # ERROR: T0106

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=32) as bx:
            T.copy(A, B)
    return main
