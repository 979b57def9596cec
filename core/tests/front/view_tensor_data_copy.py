# A 3-D tensor copied through a 2-D view of its storage (`T.Tensor` over
# `A.data`): each block of 4 view rows is one (i, :, :) slab of A.
# RUN-EQUAL: B = A
# CHECK: copy %A[
# CHECK: copy %S[
import tilelang
import tilelang.language as T


@tilelang.jit
def view_tensor_data_copy(P=6, Q=4, N=16, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((P, Q, N), dtype), B: T.Tensor((P, Q, N), dtype)):
        with T.Kernel(P, threads=64) as bx:
            a_flat = T.Tensor((P * Q, N), dtype, A.data)
            b_flat = T.Tensor((P * Q, N), dtype, B.data)
            S = T.alloc_shared((Q, N), dtype)
            T.copy(a_flat[bx * Q, 0], S)
            T.copy(S, b_flat[bx * Q : bx * Q + Q, :])

    return main
