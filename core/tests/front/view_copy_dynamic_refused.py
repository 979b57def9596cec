# A whole view of a buffer of run-time length is not a box of the buffer
# with the view's shape, and copying it element by element needs
# compile-time extents: refused with a note.
import tilelang
import tilelang.language as T


@tilelang.jit
def view_copy_dynamic_refused(dtype="float32"):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n // 4, 4), dtype)):
        with T.Kernel(1, threads=64) as bx:
            rows = T.reshape(A, [n // 4, 4])
            T.copy(rows, B)  # ERROR: T0306

    return main
