# The kept-dimension output also works for thread-local buffers: each row
# of a (4, 8) local buffer summed into a (4, 1) one.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_keepdim_local(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, 8), dtype), B: T.Tensor((4, 1), dtype), C: T.Tensor((4, 1), dtype)):
        with T.Kernel(1) as bx:
            src = T.alloc_local((4, 8), dtype)
            dst = T.alloc_local((4, 1), dtype)
            for i, j in T.grid(4, 8):
                src[i, j] = A[i, j]
            T.reduce_sum(src, dst, dim=1, clear=True)
            for i in T.serial(4):
                B[i, 0] = dst[i, 0]
                acc = T.alloc_var(dtype)
                acc = 0
                for k in T.serial(8):
                    acc += A[i, k]
                C[i, 0] = acc

    return main
