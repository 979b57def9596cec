# A multicast `T.tma_copy` is refused; its barrier must be a barrier.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tma_copy_misuse(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float32")
            bar = T.alloc_barrier(64)
            T.tma_copy(A, S, barrier=bar, cluster_mask=0b11)  # ERROR: T0300
            T.tma_copy(A, S, barrier=S)  # ERROR: T0309
            T.async_copy(A, S, wait=True)  # ERROR: T0102
            T.copy(S, B)

    return main
