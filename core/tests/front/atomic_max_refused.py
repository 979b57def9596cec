# The IR's only atomic is an add: `T.atomic_max` is refused, with a note on
# what to write instead.
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_max_refused(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                T.atomic_max(B[0], A[i])  # ERROR: T0300

    return main
