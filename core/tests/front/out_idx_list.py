import tilelang
import tilelang.language as T


# CHECK: attrs(out_idx=[1, 2])
@tilelang.jit(out_idx=[-2, -1])
def two_outputs(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
            T.copy(A, C)
    return main
