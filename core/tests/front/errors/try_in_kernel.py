import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def try_in_kernel(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            try:  # ERROR: T0100
                T.copy(A, B)
            except Exception:
                pass

    return main
