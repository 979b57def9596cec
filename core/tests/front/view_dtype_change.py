# `T.view` to another element type would reinterpret the bits; tilec
# refuses it with a note.
import tilelang
import tilelang.language as T


@tilelang.jit
def view_dtype_change(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            a = T.view(A, (N,), dtype="int32")  # ERROR: T0300
            for i in T.Parallel(N):
                B[i] = a[i]

    return main
