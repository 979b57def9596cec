# Bitwise reducers are refused: tilec reduces with sum, max and min only.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_bitwise_refused(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A, F)
            s = T.alloc_reducer((M,), "int32", op="bitor")  # ERROR: T0300
            T.reducer_init(s)
            T.copy(s, B)

    return main
