# An element combined into an element by `T.atomic_max` at block level is a
# thread-level atomic, run once by every thread as for `T.atomic_add`; the
# maximum of one repeated value is that value, and the minimum is kept when
# the value is larger.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_max_per_thread(threads=32):
    @T.prim_func
    def main(A: T.Tensor((4,), "int32"), B: T.Tensor((2,), "int32"), C: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=threads):
            B[0] = -5
            B[1] = -5
            C[0] = A[3] + 9
            C[1] = -5
            T.atomic_max(B[0], A[3] + 9, memory_order="relaxed")
            T.atomic_min(B[1], A[3] + 9)

    return main
