# A scan over a view of a global buffer is refused: tilec scans on-chip
# buffers, so the data is copied into shared memory first.
import tilelang
import tilelang.language as T


@tilelang.jit
def cumsum_view_of_global_refused(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            T.cumsum(T.reshape(A, [8, 8]), dim=1)  # ERROR: T0300

    return main
