import tilelang
import tilelang.language as T


# DEFINE: M=128
# DEFINE: N=64
# CHECK: func @eager_add(%A: global f32[128, 64], %B: global f32[128, 64], %C: global f32[128, 64]) attrs(out_idx=[2])
# CHECK: kernel grid(2) threads(128)
@tilelang.jit
def eager_add(A, B, block_M: int = 64, dtype=T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        for i, j in T.Parallel(block_M, 64):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
    return C
