# Stores a dynamic number of elements into a fixed shared tile: nothing
# bounds N by the tile's 256 elements (good/dynamic_store_assumed.py adds
# the T.assume that does).
# REPLAY: out-of-bounds
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def stage():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((256,), "float32")
            for i in T.serial(N):
                S[i] = A[i]
            for i in T.serial(N):
                B[i] = S[i] * 2.0

    return main
