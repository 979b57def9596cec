# next_power_of_2 takes a compile-time integer, as `bit_length` needs one.
import tilelang
import tilelang.language as T


@tilelang.jit
def widths(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(N, threads=32) as bx:
            A[bx] = tilelang.math.next_power_of_2(bx)  # ERROR: T0306
            A[bx] = tilelang.math.next_power_of_2(2.5)  # ERROR: T0103

    return main
