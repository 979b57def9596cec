# A dtype name TileLang does not have is refused, short or long.
import tilelang
import tilelang.language as T


@tilelang.jit
def copy_unsigned(M=64):
    storage = T.dtype("ushort3")  # ERROR: T0301

    @T.prim_func
    def main(A: T.Tensor((M,), storage), B: T.Tensor((M,), storage)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(M):
                B[i] = A[i]

    return main
