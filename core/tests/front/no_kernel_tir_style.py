# TVM-style code without a kernel: `T.Buffer` parameters, `T.func_attr`, an
# on-chip scratch buffer from `T.alloc_buffer`, `range` and `T.grid` loops
# and an augmented store. It runs once, in one thread; `B` gets `A` back
# after a round trip through the reversed scratch buffer.
# RUN-EQUAL: B = A
# CHECK: kernel grid(1) threads(1)
import tilelang
import tilelang.language as T


@T.prim_func
def round_trip(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):  # WARNING: W0002
    T.func_attr({"global_symbol": "round_trip", "tir.noalias": True})
    scratch = T.alloc_buffer((32,), "float32")
    for i in range(4):
        for j in T.serial(8):
            scratch[31 - (i * 8 + j)] = A[i, j]
    for i, j in T.grid(4, 8):
        B[i, j] = 1.0
        B[i, j] += scratch[31 - (i * 8 + j)] - 1.0
