import tilelang
import tilelang.language as T


# CHECK: alloc %C_local: fragment f32[64, 64]
# CHECK: for %k in pipelined(0, 4, stages=2) {
# CHECK: gemm %A_shared[0 +: 64, 0 +: 32], %B_shared[0 +: 32, 0 +: 64], %C_local[0 +: 64, 0 +: 64], policy=square, clear=false
@tilelang.jit(out_idx=[-1])
def matmul(M=128, N=128, K=128, bm=64, bn=64, bk=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype)
            B_shared = T.alloc_shared((bk, bn), dtype)
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])
    return main
