# A bitwise reduction of floating-point values is refused at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_bitwise_float(M=8, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "float32")
            R = T.alloc_fragment((M,), "float32")
            T.copy(A, F)
            T.reduce_bitor(F, R, dim=1)  # ERROR: T0103
            T.copy(R, B)

    return main
