# `T.alloc_global` inside a kernel is refused with a note to move it to the
# top of the function.
import tilelang
import tilelang.language as T


@tilelang.jit
def alloc_global_in_kernel(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            tmp = T.alloc_global((N,), dtype)  # ERROR: T0308
            for i in T.Parallel(N):
                B[i] = A[i] + tmp[i]

    return main
