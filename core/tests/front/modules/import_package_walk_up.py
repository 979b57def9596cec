# A dotted import of a package that is not beside the kernel: the name is
# resolved from an ancestor folder, as when TileLang's tests run from the
# repository root (`from examples.x.y import f`).
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T
import _tilec_pkg.layouts.rows
import _tilec_pkg.layouts.rows as rows
from _tilec_pkg.layouts.rows import padded


# CHECK: %A: global f32[32]
@tilelang.jit
def copy_padded(N=20):
    M = padded(N) + rows.ROW_TILE - _tilec_pkg.layouts.rows.ROW_TILE

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)

    return main
