import tilelang
import tilelang.language as T


# `T.handle` parameters typed by `T.match_buffer` (TVM's form): each buffer
# takes its handle's place among the parameters, whatever order the matches
# come in, so `b_ptr` is the second parameter and `C` the third.
# RUN-EQUAL: B = C
@T.prim_func
def matched(a_ptr: T.handle, b_ptr: T.handle, C: T.Tensor((16, 16), "float32")):
    B = T.match_buffer(b_ptr, (16, 16), dtype=T.float32, align=16)
    A = T.match_buffer(a_ptr, (16, 16), "float32")
    with T.Kernel(1, threads=128):
        for i, j in T.Parallel(16, 16):
            B[i, j] = A[i, j] * 2
            C[i, j] = A[i, j] + A[i, j]
