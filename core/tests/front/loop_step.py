import tilelang
import tilelang.language as T


# Kernel loops with a step: `T.serial(start, stop, step)`, `T.unroll(...,
# step=k)` and `range(start, stop, step)` visit start, start + step, ...
# below stop (none when the range is empty), as in TileLang. `C` spells out
# which loop wrote each element last.
# RUN-EQUAL: B = C
@T.prim_func
def stepped(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        for i in T.serial(64):
            B[i] = T.float32(0)
        for i in T.serial(0, 64, 4):
            B[i] = A[i] * 2
        for i in T.unroll(1, 64, step=3):
            B[i] = A[i] + 1
        for i in range(2, 63, 5):
            B[i] = -A[i]
        for i in T.serial(10, 5, 2):
            B[i] = T.float32(100)
        for i in T.serial(64):
            C[i] = T.if_then_else(
                i % 5 == 2,
                -A[i],
                T.if_then_else(i % 3 == 1, A[i] + 1, T.if_then_else(i % 4 == 0, A[i] * 2, T.float32(0))),
            )
