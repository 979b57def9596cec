# `T.sync_warp()` reached by the whole block orders the shared stores
# before it against the loads after it (staged as a block barrier), so
# every thread reads its neighbour's element.
# RUN-EQUAL: B = E
import tilelang
import tilelang.language as T


@tilelang.jit
def sync_warp_kernel():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32"), E: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            S = T.alloc_shared((32,), "float32")
            S[tx] = A[tx]
            T.sync_warp()
            B[tx] = S[(tx + 1) % 32] * 2.0
            E[tx] = A[(tx + 1) % 32] * 2.0

    return main
