# A warp reduction needs every lane of the warp at once: under an `if` on
# the thread index it is refused at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_reduce_guarded():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            if tx < 16:
                A[tx] = T.warp_reduce_sum(A[tx])  # ERROR: T0300

    return main
