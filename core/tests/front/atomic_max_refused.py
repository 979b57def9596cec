# `return_prev=True` would return the previous value, which tilec's atomics
# do not give back: it is refused at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_max_return_prev(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((1,), "int32"), C: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                C[i] = T.atomic_min(B[0], A[i], return_prev=True)  # ERROR: T0300

    return main
