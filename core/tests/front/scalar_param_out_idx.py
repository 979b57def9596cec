import tilelang
import tilelang.language as T


# `out_idx` names the parameters by signature position; a scalar is no output.
@tilelang.jit(out_idx=[1])  # ERROR: T0309
def shift(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.int32), k: T.int32):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                A[i] = A[i] + k
    return main
