import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def empty_in_prim_func(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            C = T.empty((N,), "float32")  # ERROR: T0308

    return main
