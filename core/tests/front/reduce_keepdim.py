# A reduction whose output keeps the reduced dimension as extent 1
# (`[4, 1]` for `[4, 8]` along dim 1), with and without clearing: the
# second sum adds to the first.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_keepdim(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, 8), dtype), B: T.Tensor((4, 1), dtype), C: T.Tensor((4, 1), dtype)):
        with T.Kernel(1, threads=32) as bx:
            src = T.alloc_fragment((4, 8), dtype)
            dst = T.alloc_fragment((4, 1), dtype)
            T.copy(A, src)
            T.reduce_sum(src, dst, dim=1, clear=True)
            T.reduce_sum(src, dst, dim=1, clear=False)
            T.copy(dst, B)
            for i in T.serial(4):
                acc = T.alloc_var(dtype)
                acc = 0
                for k in T.serial(8):
                    acc += A[i, k]
                C[i, 0] = acc * 2

    return main
