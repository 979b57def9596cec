# A region of a view whose rows cross rows of the viewed buffer: rows
# 3..5 of the (24, 16) view are rows (0, 3), (1, 0), (1, 1) of the
# (6, 4, 16) buffer, not one box of it. The copy goes element by element,
# each view row at its own place; C is the same copy written by hand.
# RUN-EQUAL: B = C
# CHECK: parallel
import tilelang
import tilelang.language as T


@tilelang.jit
def view_region_crosses_rows(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((6, 4, 16), dtype), B: T.Tensor((3, 16), dtype), C: T.Tensor((3, 16), dtype)):
        with T.Kernel(1, threads=64) as bx:
            a_flat = T.Tensor((24, 16), dtype, A.data)
            T.copy(a_flat[3:6, :], B)
            for i, j in T.Parallel(3, 16):
                C[i, j] = A[(3 + i) // 4, (3 + i) % 4, j]

    return main
