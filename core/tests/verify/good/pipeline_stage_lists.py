# pipeline_too_few_stages.py with the versions its stage list needs: the
# copies run two iterations ahead of the gemm (stage 2) and num_stages=3
# keeps three versions of each shared tile.
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
                T.ceildiv(K, block_K), num_stages=3, order=[0, 1, 2], stage=[0, 0, 2]
            ):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
