import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def grows(N=64):
    s = "ab"
    for _ in range(40):
        s = f"{s}{s}"  # ERROR: T0109

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            T.copy(A, B)
    return main
