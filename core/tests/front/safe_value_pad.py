import tilelang
import tilelang.language as T


# `T.annotate_safe_value({A: v})`: loads of the global buffer `A` outside
# its shape read `v` instead of zero, below index 0 as above the end, for
# element loads and for each element of a `T.copy` from `A`. `D` spells the
# same values out with an explicit bounds test.
# RUN-EQUAL: B = D
# RUN-EQUAL: C = D
# RUN-EQUAL: E = D
@T.prim_func
def padded(
    A: T.Tensor((50,), "float32"),
    B: T.Tensor((64,), "float32"),
    C: T.Tensor((64,), "float32"),
    D: T.Tensor((64,), "float32"),
    E: T.Tensor((64,), "float16"),
):
    with T.Kernel(2, threads=32) as bx:
        T.annotate_safe_value({A: -7})
        S = T.alloc_shared((32,), "float32")
        H = T.alloc_shared((32,), "float16")
        T.copy(A[bx * 32 - 10], S)
        T.copy(S, B[bx * 32])
        T.copy(A[bx * 32 - 10 : bx * 32 + 22], H)
        T.copy(H, E[bx * 32 : bx * 32 + 32])
        for i in T.Parallel(32):
            C[bx * 32 + i] = A[bx * 32 + i - 10]
        for i in T.Parallel(32):
            k = bx * 32 + i - 10
            D[bx * 32 + i] = T.if_then_else(k >= 0 and k < 50, A[T.max(k, 0)], T.float32(-7))
