# A `T.Layout` whose function is integer arithmetic of the indices, and
# none of the built-in layouts, is pinned as that arithmetic: the
# function is staged once more on placeholder indices (helpers, `T.min`,
# `T.floordiv` and shifts included). A function that branches on its
# indices, or calls what has no index-map form, is warned about and not
# followed; so is a map with offsets of 2^31 or more, and nothing staged
# while trying is left in the kernel.
# CHECK: alloc %X: shared f16[16, 64] layout mapped("i0 * 64 + (i1 // 8 ^ (i0 >> 1) % 8) * 8 + i1 % 8")
# CHECK: alloc %Y: shared f32[8, 8] layout mapped("min(i0, 7 - i0) * 16 + i0 // 4 * 8 + i1")
# CHECK: alloc %Z: shared f32[4, 6] layout mapped("i1 * 4 + i0")
# CHECK: alloc %R: shared f32[32] layout mapped("31 - i0")
# CHECK: alloc %B: shared f32[8, 8]
# CHECK-NOT: layout
# CHECK: alloc %W: shared f32[8, 8]
# CHECK-NOT: layout
# CHECK: alloc %H: shared f32[8, 8]
# CHECK-NOT: layout
# CHECK: fill
# CHECK-NOT: layout_i
import tilelang
import tilelang.language as T


def chunk_key(i):
    return (i >> 1) % 8


def swizzle(rows, cols):
    return T.Layout((rows, cols), lambda i, j: i * cols + (T.floordiv(j, 8) ^ chunk_key(i)) * 8 + j % 8)


@tilelang.jit(out_idx=[-1])
def kernel(n=64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            X = T.alloc_shared((16, 64), "float16")
            Y = T.alloc_shared((8, 8), "float32")
            Z = T.alloc_shared((4, 6), "float32")
            R = T.alloc_shared((32,), "float32")
            B = T.alloc_shared((8, 8), "float32")
            W = T.alloc_shared((8, 8), "float32")
            H = T.alloc_shared((8, 8), "float32")
            T.annotate_layout({
                X: swizzle(16, 64),
                Y: T.Layout((8, 8), lambda i, j: T.min(i, 7 - i) * 16 + (i // 4) * 8 + j),
                Z: T.Layout((4, 6), lambda i, j: [j, i, 0]),
                R: T.Layout((32,), lambda i: 31 - i),
                B: T.Layout((8, 8), lambda i, j: i * 8 + (7 - j if i % 2 else j)),  # WARNING: W0001
                W: T.Layout((8, 8), lambda i, j: i * 8 + abs(j - 7)),  # WARNING: W0001
                H: T.Layout((8, 8), lambda i, j: i * (1 << 31) + j),  # WARNING: W0001
            })
            T.fill(X, 0)
            T.fill(Y, 1)
            T.fill(Z, 2)
            T.fill(R, 3)
            T.fill(B, 4)
            T.fill(W, 5)
            T.fill(H, 6)
            for i in T.Parallel(n):
                C[i] = A[i] + Y[i % 8, i // 8] + R[i % 32]
    return main
