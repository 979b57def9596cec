# A tiled matrix multiplication whose output tile offset uses block_M for
# the columns as well as the rows. With block_N = 2 * block_M the tiles of
# neighbouring blocks overlap: blocks bx and bx + 1 both write columns
# (bx + 1) * block_M .. (bx + 2) * block_M - 1 of C, each with its own
# values, and which one lands is up to the hardware. The write's layout
# over the grid is not injective. Replayed by running each of the two
# blocks of the counterexample alone: both write the element it names.
# REPLAY: overlap
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=64, N=256, K=32, block_M=64, block_N=128, block_K=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float16"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_M])

    return main
