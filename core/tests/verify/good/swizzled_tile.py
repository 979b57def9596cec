# The swizzle of swizzle_wider_than_tile.py sized for the tile: rows of 32
# halves are 4 chunks of 8, and chunk c of row i goes to c ^ (i % 4), a
# permutation of every row. The same swizzle reads the tile back.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def swizzled_copy(M=128, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, N), "float16")
            for i, j in T.Parallel(64, N):
                S[i, ((j // 8) ^ (i % 4)) * 8 + j % 8] = A[bx * 64 + i, j]
            for i, j in T.Parallel(64, N):
                B[bx * 64 + i, j] = S[i, ((j // 8) ^ (i % 4)) * 8 + j % 8]

    return main
