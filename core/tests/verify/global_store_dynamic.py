# Writes one element past the end of B for the last i: the store is
# dropped by the out-of-bounds rule, which is never what was meant, and
# B[0] is never written.
# REPLAY: unwritten
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shift():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            T.assume(N <= 1 << 20)
            for i in T.Parallel(128):
                if bx * 128 + i < N:
                    B[bx * 128 + i + 1] = A[bx * 128 + i]

    return main
