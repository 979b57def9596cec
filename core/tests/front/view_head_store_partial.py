# A tile stored at a head address of a flattened view whose last block is
# partial: block 1 covers view rows 8..15 of 12, so rows 12..15 are
# dropped, as TileLang bounds a copy by the view's shape.
# RUN-EQUAL: B = A
# CHECK: if
import tilelang
import tilelang.language as T


@tilelang.jit
def view_head_store_partial(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((12, 16), dtype), B: T.Tensor((3, 4, 16), dtype)):
        with T.Kernel(2, threads=64) as bx:
            b_flat = T.Tensor((12, 16), dtype, B.data)
            S = T.alloc_shared((8, 16), dtype)
            T.copy(A[bx * 8 : bx * 8 + 8, :], S)
            T.copy(S, b_flat[bx * 8, 0])

    return main
