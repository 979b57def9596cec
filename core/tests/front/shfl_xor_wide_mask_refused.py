# A lane mask of 32 or more gives each thread its own value on CUDA but reads the other half of HIP's 64-lane wavefront, so it is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_xor_wide_mask_refused():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            A[tx] = T.shfl_xor(A[tx], 32)  # ERROR: T0300

    return main
