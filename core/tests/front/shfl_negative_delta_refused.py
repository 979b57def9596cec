# CUDA reads a negative distance as unsigned and HIP as a lane index, so a negative constant distance is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_negative_delta_refused():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            A[tx] = T.shfl_down(A[tx], -1)  # ERROR: T0300

    return main
