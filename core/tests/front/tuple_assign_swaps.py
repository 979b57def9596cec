# Python evaluates the right-hand side of a tuple assignment before any
# store: `a, b = b, a` swaps two `T.alloc_var`s and `B[0], B[1] = B[1], B[0]`
# swaps two elements. B and D must both equal C, written directly.
# RUN-EQUAL: B = C
# RUN-EQUAL: D = C
import tilelang
import tilelang.language as T


@tilelang.jit
def tuple_swap():
    @T.prim_func
    def main(
        A: T.Tensor((2,), "float32"),
        B: T.Tensor((2,), "float32"),
        C: T.Tensor((2,), "float32"),
        D: T.Tensor((2,), "float32"),
    ):
        with T.Kernel(1, threads=1):
            a = T.alloc_var("float32", A[0])
            b = T.alloc_var("float32", A[1])
            a, b = b, a
            B[0], B[1] = a, b
            C[0] = A[1]
            C[1] = A[0]
            D[0] = A[0]
            D[1] = A[1]
            D[0], D[1] = D[1], D[0]

    return main
