# Nested `for ... in T.thread_binding(...)` loops bind the launch axes; a
# second thread axis is the linear thread index divided by the first.
# CHECK: kernel grid(3) threads(128) block(%b) thread(%tx)
# CHECK: %tx % 32
# CHECK: %tx // 32
import tilelang
import tilelang.language as T


@T.prim_func
def copy_rows(A: T.Tensor((3, 4, 32), "float16"), B: T.Tensor((3, 4, 32), "float16")):
    for b in T.thread_binding(3, thread="blockIdx.x"):
        for lane in T.thread_binding(0, 32, thread="threadIdx.x"):
            for row in T.thread_binding(4, "threadIdx.y"):
                B[b, row, lane] = A[b, row, lane]
