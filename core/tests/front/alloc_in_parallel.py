import tilelang
import tilelang.language as T


# A `T.alloc_var` inside a `T.Parallel` body is a scalar of each iteration
# (TileLang allocates it per thread, set anew by every iteration): each
# element is clamped through its own `x`, the same as the closed form.
# RUN-EQUAL: B = C
@T.prim_func
def per_iteration(A: T.Tensor((256,), "int32"), B: T.Tensor((256,), "int32"), C: T.Tensor((256,), "int32")):
    with T.Kernel(2, threads=64) as bx:
        for i in T.Parallel(128):
            x = T.alloc_var(T.int32, init=A[bx * 128 + i])
            if x < 0:
                x = -x
            x = x * 3 + 1
            B[bx * 128 + i] = x
        for i in T.Parallel(128):
            C[bx * 128 + i] = T.if_then_else(A[bx * 128 + i] < 0, -A[bx * 128 + i], A[bx * 128 + i]) * 3 + 1
