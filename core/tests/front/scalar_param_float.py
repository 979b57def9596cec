import tilelang
import tilelang.language as T


# Only integer scalars are passed at launch so far.
def offset(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), s: T.float32):  # ERROR: T0300
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                A[i] = A[i] + s
    return main
