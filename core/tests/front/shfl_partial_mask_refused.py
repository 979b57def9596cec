# A shuffle with a partial lane mask is refused: tilec shuffles with every lane.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_partial_mask_refused():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            A[tx] = T.shfl_sync(A[tx], 0, mask=0x0000FFFF)  # ERROR: T0300

    return main
