# Two 128 KiB shared tiles of float32: more than sm_80's 163 KiB.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def big_tiles(M=128, N=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((128, 256), "float32")
            R = T.alloc_shared((128, 256), "float32")
            T.copy(A[0, 0], S)
            T.copy(S, R)
            T.copy(R, B[0, 0])

    return main
