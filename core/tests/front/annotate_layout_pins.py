# `T.annotate_layout` pins the shared layouts tilelang.layout's
# constructors ask for (a swizzle as wide as the rows allow, or a given
# width; linear rows); other layouts stay hints.
# CHECK: kernel grid(2, 2) threads(128)
# CHECK: alloc %A_shared: shared f16[128, 32] layout swizzled(64)
# CHECK: alloc %B_shared: shared f16[32, 128] layout swizzled(32)
# CHECK: alloc %S: shared f32[16, 128] layout shared
# CHECK: alloc %C_local: fragment f32[128, 128]
# CHECK-NOT: layout
# CHECK: for %ko in pipelined(0, 8, stages=3) {
import tilelang
import tilelang.language as T
from tilelang.intrinsics import make_mma_swizzle_layout as make_swizzle_layout
from tilelang.layout import make_quarter_bank_swizzled_layout


@tilelang.jit(out_idx=[-1])
def matmul(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            S = T.alloc_shared((16, block_N), "float32")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.annotate_layout({
                A_shared: tilelang.layout.make_swizzled_layout(A_shared),
                B_shared: make_quarter_bank_swizzled_layout(B_shared),
                S: make_swizzle_layout(S, is_smooth=True),
                C_local: tilelang.layout.make_fragment_hint_layout(C_local),
            })
            T.use_swizzle(panel_size=10, enable=True)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm
