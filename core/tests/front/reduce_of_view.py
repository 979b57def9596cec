# A reduction over a reshaped fragment: each row of 32 is read as 4 groups
# of 8 and summed per group (TileLang's `T.reduce_sum(T.reshape(s, ...))`).
# C holds the same sums computed by serial loops.
# RUN-EQUAL: B = C
# CHECK: reduce sum
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_of_view(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((16, 32), dtype), B: T.Tensor((16, 4), dtype), C: T.Tensor((16, 4), dtype)):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_fragment((16, 32), dtype)
            T.copy(A, s)
            grouped = T.reshape(s, [16, 4, 8])
            sums = T.alloc_fragment((16, 4), dtype)
            T.reduce_sum(grouped, sums, dim=-1, clear=True)
            T.copy(sums, B)
            for i in T.serial(16):
                for g in T.serial(4):
                    acc = T.alloc_var(dtype)
                    acc = 0
                    for k in T.serial(8):
                        acc += A[i, g * 8 + k]
                    C[i, g] = acc

    return main
