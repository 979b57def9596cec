# An index computed through N * 65536, which wraps in int32 once N reaches
# 32768: the wrapped quotient no longer cancels N and the index leaves the
# shared tile.
# REPLAY: out-of-bounds
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rescale():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            T.assume(N <= 65536)
            S = T.alloc_shared((64,), "float32")
            T.fill(S, 1.0)
            for i in T.Parallel(64):
                B[i] = S[(N * 65536) // 65536 - N + i]

    return main
