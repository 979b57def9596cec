import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def unpack_count_mismatch(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            a, b = (1, 2, 3)  # ERROR: T0310

    return main
