# A 256 x 256 output tile per block of 128 threads, accumulated in float32
# and cast to float16 in a second fragment before it is stored: 512 + 256
# registers per thread, 98304 per block, where sm_90a has 65536 per block.
# No interpreter models register files, so this refutation is not
# replayed; the test checks the estimate and that a 128-wide tile fits.
# TARGET: sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=256, N=256, K=64, block_M=256, block_N=256, block_K=32):
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
            C_cast = T.alloc_fragment((block_M, block_N), "float16")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_cast)
            T.copy(C_cast, C[by * block_M, bx * block_N])

    return main
