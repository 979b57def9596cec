# CHECK: atomic_add %B[%i +: 1], %A[%i]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def atomic_add_scalar(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                T.atomic_add(B[i], A[i])

    return main
