import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce_wrong_output_shape(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((4, 16), "float32")
            R = T.alloc_fragment((16,), "float32")
            T.clear(F)
            T.reduce_sum(F, R, dim=1)  # ERROR: T0304

    return main
