# `T.warp_reduce_bitand` combines bits, which a float32 value has no
# integer form of: refused at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_reduce_bits_of_float():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            A[tx] = T.warp_reduce_bitand(A[tx])  # ERROR: T0300

    return main
