# RUN
# `T.grid(a, b)` is serial loops nested in order, one variable per extent.
# CHECK: for %i in serial(0, 4)
# CHECK: for %j in serial(0, 8)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def grid_nested_loops(M=4, N=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((M, N), "float32")
            T.copy(A, S)
            for i, j in T.grid(M, N):
                S[i, j] = S[i, j] + i * N + j
            T.copy(S, B)

    return main
