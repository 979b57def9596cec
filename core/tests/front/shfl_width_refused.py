# CUDA's shuffle width is a power of two up to 32.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_width_refused():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            A[tx] = T.shfl_sync(A[tx], 0, width=12)  # ERROR: T0300

    return main
