# CHECK: kernel grid(4)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ceildiv_grid(N=100, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 32), threads=64) as bx:
            T.copy(A, B)

    return main
