# Without a target, a build-time device query has nothing to answer from.
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver


@tilelang.jit
def persistent(M=1024):
    sms = driver.get_num_sms()  # ERROR: T0111

    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(sms, threads=128) as bx:
            A[bx] = 0.0

    return main
