import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def needs_n(N):  # ERROR: T0203
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main
