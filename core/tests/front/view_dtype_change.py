# `T.view` to another element type of the same width reads the bits as
# that type: element by element in a `T.Parallel` loop, the same as
# `T.reinterpret` of each element.
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


@tilelang.jit
def view_dtype_change(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "int32"), C: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            a = T.view(A, (N,), dtype="int32")
            for i in T.Parallel(N):
                B[i] = a[i]
                C[i] = T.reinterpret(A[i], "int32")

    return main
