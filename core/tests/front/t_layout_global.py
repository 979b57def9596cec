# RUN
# A `T.Layout` annotating a global buffer rearranges the caller's tensor:
# element (i0, i1, ...) is read and written at the offset the function
# gives, as TileLang addresses it. The layout is pinned on the parameter
# as `mapped`. Layouts of more than 65536 elements are read from what
# their function stages for placeholder indices. A layout that keeps
# every element in place pins nothing.
# CHECK: %P: global f32[4, 128, 256] layout mapped("(((i0 * 16 + i1 // 8) * 32 + i2 // 8) * 2 + i2 % 2) * 32 + (4 * (i1 % 8) + i2 % 8 // 2)")
# CHECK: %Q: global f32[16, 8] layout mapped("i1 * 16 + i0")
# CHECK: %S: global f32[16, 8]
# CHECK-NOT: layout
# CHECK: %O: global f32[4, 128, 256]
import tilelang
import tilelang.language as T


def reorder(buf):
    return T.Layout(buf.shape, lambda b, l, d: [b, l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2])


@T.prim_func
def main(
    P: T.Tensor((4, 128, 256), "float32"),
    Q: T.Tensor((16, 8), "float32"),
    S: T.Tensor((16, 8), "float32"),
    O: T.Tensor((4, 128, 256), "float32"),
):
    with T.Kernel(4, threads=128) as bx:
        T.annotate_layout({
            P: reorder(P),
            Q: T.Layout((16, 8), lambda i, j: [j, i]),
            S: T.Layout((16, 8), lambda i, j: i * 8 + j),
        })
        T.copy(P[bx, :, :], O[bx, :, :])
        for i, j in T.Parallel(16, 8):
            S[i, j] = Q[i, j]
