# tilec runs a warp reduction over every thread of the block, so one in a
# `T.ws` role (some warp groups only) is refused at the call.
import tilelang.language as T


@T.prim_func
def warp_reduce_in_role(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256):
        tx = T.get_thread_binding()
        with T.ws(1):
            A[tx] = T.warp_reduce_sum(A[tx])  # ERROR: T0300
