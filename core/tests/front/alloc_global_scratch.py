# `T.alloc_global` allocates a global scratch buffer of the function, here
# written by one kernel and read by the next.
# RUN-EQUAL: B = A
# CHECK: alloc %tmp: global f32[64]
import tilelang
import tilelang.language as T


@tilelang.jit
def alloc_global_scratch(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        tmp = T.alloc_global((N,), dtype)
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                tmp[i] = A[i]
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = tmp[i]

    return main
