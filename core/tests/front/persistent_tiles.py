# T.Persistent: a few blocks walk the whole tile domain in waves; every tile
# is visited once (grouped by 2 along the last dimension), and tiles past
# the domain are skipped. 3 x 5 tiles, 4 blocks.
# CHECK: for %w in serial(0, 5)
# CHECK: if
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def persistent_tiles(tm=3, tn=5, bm=4, bn=8, blocks=4):
    M, N = tm * bm, tn * bn

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=32) as block_id:
            S = T.alloc_shared((bm, bn), "float32")
            for bx, by in T.Persistent([tm, tn], blocks, block_id, group_size=2):
                T.copy(A[bx * bm, by * bn], S)
                T.copy(S, B[bx * bm, by * bn])

    return main
