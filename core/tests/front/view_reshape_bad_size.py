# `T.reshape` keeps the storage: the new shape must hold as many elements.
import tilelang
import tilelang.language as T


@tilelang.jit
def view_reshape_bad_size(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            a2 = T.reshape(A, [8, 9])  # ERROR: T0309
            B[0] = a2[0, 0]

    return main
