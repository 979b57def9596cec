# A tile stored at a head address of a flattened view of a 4-D output:
# the 8 view rows of each block are 2 x 4 rows of the (2, 4, 4, 16)
# buffer, a box of another shape, so the store goes element by element.
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def view_head_store_crosses_rows(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((32, 16), dtype), B: T.Tensor((2, 4, 4, 16), dtype)):
        with T.Kernel(4, threads=64) as bx:
            b_flat = T.Tensor((32, 16), dtype, B.data)
            S = T.alloc_shared((8, 16), dtype)
            T.copy(A[bx * 8 : bx * 8 + 8, :], S)
            T.copy(S, b_flat[bx * 8, 0])

    return main
