import tilelang.language as T


# `T.dp4a(a, b, c)` adds the dot product of four signed bytes from `a` and
# from `b` to the int32 at `c`. Each of 16 threads accumulates the dot
# product of its 8-byte rows of A and B with two `T.dp4a` calls on
# elements; a single thread does the same over whole buffers. The
# references are the same sums written out with casts.
# RUN-EQUAL: C = D
# RUN-EQUAL: E = F
@T.prim_func
def dp4a(
    A: T.Tensor((16, 8), "int8"),
    B: T.Tensor((16, 8), "int8"),
    C: T.Tensor((16,), "int32"),
    D: T.Tensor((16,), "int32"),
    E: T.Tensor((1,), "int32"),
    F: T.Tensor((1,), "int32"),
):
    with T.Kernel(1, threads=16):
        tx = T.get_thread_binding()
        C[tx] = 7
        T.dp4a(A[tx, 0], B[tx, 0], C[tx])
        T.dp4a(A[tx, 4], B[tx, 4], C[tx])
        D[tx] = 7
        for k in T.serial(8):
            D[tx] = D[tx] + T.int32(A[tx, k]) * T.int32(B[tx, k])
    with T.Kernel(1, threads=1):
        E[0] = -3
        T.dp4a(A, B, E)
        F[0] = -3
        for k in T.serial(4):
            F[0] = F[0] + T.int32(A[0, k]) * T.int32(B[0, k])
