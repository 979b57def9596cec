# `T.Layout` maps that are dense, padded or swizzled rows are pinned as
# those; other maps whose function is integer arithmetic of the indices
# are pinned as that arithmetic (`mapped`); the rest, and `T.Fragment`,
# are accepted with a warning and not followed.
# CHECK: alloc %A_shared: shared f16[64, 64] layout swizzled(128)
# CHECK: alloc %B_shared: shared f16[64, 64] layout padded(72)
# CHECK: alloc %D: shared f32[16, 32] layout swizzled(64)
# CHECK: alloc %L: shared f16[64, 64] layout shared
# CHECK: alloc %P: shared f16[64, 64] layout mapped("i1 * 64 + i0")
# CHECK: alloc %H: shared f16[4, 16]
# CHECK-NOT: layout
# CHECK: alloc %C_local: fragment f32[64, 64]
# CHECK-NOT: layout
# CHECK: fill
import tilelang
import tilelang.language as T


def panels(rows, cols, elem_bytes, width):
    per_row = width // elem_bytes
    per_chunk = 16 // elem_bytes

    def place(i, j):
        chunk = (j % per_row) // per_chunk
        key = (i // (128 // width)) % (width // 16)
        return j // per_row * rows * per_row + i * per_row + (chunk ^ key) * per_chunk + j % per_chunk

    return T.Layout((rows, cols), place)


@tilelang.jit(out_idx=[-1])
def matmul(M=128, N=128, K=128, block=64):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block, block), "float16")
            B_shared = T.alloc_shared((block, block), "float16")
            D = T.alloc_shared((16, 32), "float32")
            L = T.alloc_shared((block, block), "float16")
            P = T.alloc_shared((block, block), "float16")
            H = T.alloc_shared((4, 16), "float16")
            C_local = T.alloc_fragment((block, block), "float32")
            T.annotate_layout({
                A_shared: panels(block, block, 2, 128),
                B_shared: T.Layout([block, block], lambda i, j: i * (block + 8) + j),
                D: panels(16, 32, 4, 64),
                L: T.Layout((block, block), lambda i, j: (i, j)),
                P: T.Layout((block, block), lambda i, j: [j, i]),
                H: T.Layout((4, 16), lambda i, j: i * (1 << 61) + j),  # WARNING: W0001
                C_local: T.Fragment((block, block), forward_thread_fn=lambda i, j: i),  # WARNING: W0001
            })
            T.clear(C_local)
            T.fill(D, 0)
            T.fill(L, 0)
            for ko in T.Pipelined(T.ceildiv(K, block), num_stages=2):
                T.copy(A[by * block, ko * block], A_shared)
                T.copy(B[ko * block, bx * block], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, P)
            T.copy(P, C[by * block, bx * block])
    return gemm
