# A full-mask shuffle needs whole warps: 48 threads leave the second warp half empty.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_partial_warp_refused():
    @T.prim_func
    def main(A: T.Tensor((48,), "float32")):
        with T.Kernel(1, threads=48):
            tx = T.get_thread_binding()
            A[tx] = T.shfl_up(A[tx], 1)  # ERROR: T0300

    return main
