import tilelang
import tilelang.language as T


# CHECK: gemm %A_shared[0 +: 32, 0 +: 64], %B_shared[0 +: 64, 0 +: 32], %C_local[0 +: 64, 0 +: 64], transpose_a, transpose_b, policy=full_col, clear=%k == 0
@tilelang.jit(out_idx=[-1])
def matmul_tt(M=64, N=64, K=64, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_shared = T.alloc_shared((32, M), dtype)
            B_shared = T.alloc_shared((N, 32), dtype)
            C_local = T.alloc_fragment((M, N), "float32")
            for k in T.Pipelined(2, num_stages=1):
                T.copy(A[k * 32, 0], A_shared)
                T.copy(B[0, k * 32], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=True, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=k == 0)
            T.copy(C_local, C)
    return main
