import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_shape_mismatch(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((32,), "float32")
            T.copy(A[0:16], S)  # ERROR: T0302

    return main
