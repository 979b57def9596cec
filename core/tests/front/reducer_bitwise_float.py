# A bitwise reducer needs an integer dtype.
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_bitwise_float(M=8, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_reducer((M,), "float32", op="bitxor")  # ERROR: T0309
            T.reducer_init(s)
            T.finalize_reducer(s)
            T.copy(s, B)

    return main
