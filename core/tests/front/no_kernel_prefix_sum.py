# A `@T.prim_func` without `T.Kernel` is one sequential execution of its
# body (TVM's meaning, and TileLang's CPU target): here a running sum that
# only works when the iterations run one after another, then the
# differences of neighbours, which give back the input.
# RUN-EQUAL: C = A
# CHECK: kernel grid(1) threads(1)
import tilelang
import tilelang.language as T


@tilelang.jit
def prefix_then_differences(N=32):
    @T.prim_func
    def main(  # WARNING: W0002
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((N,), "float32"),
        C: T.Tensor((N,), "float32"),
    ):
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for i in T.serial(N):
            acc[0] += A[i]
            B[i] = acc[0]
        C[0] = B[0]
        for i in T.Parallel(N - 1):
            C[i + 1] = B[i + 1] - B[i]

    return main
