# A pipelined matrix multiplication whose stage list runs the copies two
# iterations ahead of the gemm (stage 2) while num_stages=2 keeps only two
# versions of each shared tile: one stage too few buffers. The copy for
# iteration k + 2 is issued at the top of iteration k into the version
# (k + 2) % 2 = k % 2, the one iteration k's gemm is reading. Replayed in
# the SIMT interpreter on the schedule with the counterexample's numbers:
# the read meets the copy in flight (and with three versions it does not).
# REPLAY: pipeline
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=64, N=64, K=128, block_M=64, block_N=64, block_K=32):
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
            for k in T.Pipelined(
                T.ceildiv(K, block_K), num_stages=2, order=[0, 1, 2], stage=[0, 0, 2]
            ):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
