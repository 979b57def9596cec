import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def edges(N=64):
    ok = T.ceildiv(1, -9223372036854775807 - 1) + len(range(-9223372036854775807, 9223372036854775807, 2 ** 62))
    a = T.ceildiv(-9223372036854775807 - 1, -1)  # ERROR: T0107

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            T.copy(A, B)
    return main
