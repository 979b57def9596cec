import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def unknown_dtype(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float17")  # ERROR: T0301

    return main
