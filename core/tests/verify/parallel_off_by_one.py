# A shifted element-wise copy that reads one row past its shared tile.
# REPLAY: out-of-bounds
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shift_rows(M=64, N=32, block_M=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            S = T.alloc_shared((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], S)
            for i, j in T.Parallel(block_M, N):
                B[bx * block_M + i, j] = S[i + 1, j]

    return main
