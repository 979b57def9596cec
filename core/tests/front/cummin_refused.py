# TileLang has no T.cummin: the error says what to write instead.
import tilelang
import tilelang.language as T


@tilelang.jit
def cummin_refused(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.cummin(S)  # ERROR: T0300
            T.copy(S, A)

    return main
