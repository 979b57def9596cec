# A reduction output must have the input's shape without the reduced
# dimension, or with it kept as 1: (4, 2) for a (4, 8) input along dim 1
# is neither.
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_bad_out_shape(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, 8), dtype)):
        with T.Kernel(1, threads=32) as bx:
            src = T.alloc_fragment((4, 8), dtype)
            dst = T.alloc_fragment((4, 2), dtype)
            T.copy(A, src)
            T.reduce_sum(src, dst, dim=1)  # ERROR: T0304

    return main
