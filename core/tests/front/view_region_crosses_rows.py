# A region of a view whose rows cross rows of the viewed buffer is refused:
# rows 3..5 of the (24, 16) view are not a box of the (6, 4, 16) buffer.
import tilelang
import tilelang.language as T


@tilelang.jit
def view_region_crosses_rows(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((6, 4, 16), dtype), B: T.Tensor((3, 16), dtype)):
        with T.Kernel(1, threads=64) as bx:
            a_flat = T.Tensor((24, 16), dtype, A.data)
            T.copy(a_flat[3:6, :], B)  # ERROR: T0300

    return main
