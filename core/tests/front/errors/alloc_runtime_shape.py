import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def alloc_runtime_shape(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((bx + 1,), "float32")  # ERROR: T0306

    return main
