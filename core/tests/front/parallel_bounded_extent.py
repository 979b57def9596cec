# `T.Parallel` over a run-time extent whose largest value is known when
# compiling (`T.min(n, 64)`) runs the iterations below the extent, as in
# TileLang: staged over the bound with the body guarded by `i < extent`.
# With the test inputs, `n` is 3: `C` gets `A` on its first elements and
# keeps `B` on the rest, the same as `D` computed by an explicit guard.
# RUN-SYMBOL: n=3
# RUN-EQUAL: C = D
# CHECK: parallel (%i.1 < 64)
# CHECK: if %i.1 < %m {
import tilelang
import tilelang.language as T


@tilelang.jit
def bounded_extent(N=64):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((N,), "float32"),
        C: T.Tensor((N,), "float32"),
        D: T.Tensor((N,), "float32"),
        n: T.int32,
    ):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                C[i] = B[i]
                D[i] = B[i]
            m = T.min(n, N)
            for i in T.Parallel(m):
                C[i] = A[i]
            for i in T.Parallel(N):
                if i < n:
                    D[i] = A[i]

    return main
