# A hand-written XOR swizzle made for rows of 64 halves (8 chunks of 8,
# chunk c of row i stored at chunk c ^ (i % 8)) applied to a tile whose
# rows hold 32 (4 chunks): c ^ (i % 8) reaches chunks 4 .. 7, which the
# row does not have. The swizzle is not a permutation of the tile, and the
# stores leave it: the reference interpreter stops at the first one.
# REPLAY: out-of-bounds
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def swizzled_copy(M=128, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, N), "float16")
            for i, j in T.Parallel(64, N):
                S[i, ((j // 8) ^ (i % 8)) * 8 + j % 8] = A[bx * 64 + i, j]
            for i, j in T.Parallel(64, N):
                B[bx * 64 + i, j] = S[i, ((j // 8) ^ (i % 8)) * 8 + j % 8]

    return main
