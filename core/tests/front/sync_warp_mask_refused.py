# A `T.sync_warp` of some lanes only has no block-level equivalent.
import tilelang
import tilelang.language as T


@tilelang.jit
def sync_warp_half():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            S = T.alloc_shared((32,), "float32")
            S[tx] = A[tx]
            T.sync_warp(0x0000FFFF)  # ERROR: T0300
            A[tx] = S[31 - tx]

    return main
