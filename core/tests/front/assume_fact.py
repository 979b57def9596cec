# CHECK: assume %bx < 4
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def assume_fact(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            T.assume(bx < 4)
            T.copy(A, B)

    return main
