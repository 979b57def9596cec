# `T.shuffle_elect(n)` reached by every thread elects lane 0 of every
# group of ceil(n / 32) warps: threads 0, 64, 128, 192 for n = 64, thread
# 0 alone for n = 0, and lane 0 of every warp for n = 16 (groups are whole
# warps).
# RUN-EQUAL: A = EA
# RUN-EQUAL: B = EB
# RUN-EQUAL: C = EC
import tilelang
import tilelang.language as T


@tilelang.jit
def shuffle_elect_kernel(threads=256):
    @T.prim_func
    def main(
        A: T.Tensor((threads,), "int32"),
        EA: T.Tensor((threads,), "int32"),
        B: T.Tensor((threads,), "int32"),
        EB: T.Tensor((threads,), "int32"),
        C: T.Tensor((threads,), "int32"),
        EC: T.Tensor((threads,), "int32"),
    ):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            A[tx] = T.shuffle_elect(64)
            EA[tx] = T.if_then_else(tx // 64 * 64 == tx, 1, 0)
            B[tx] = T.shuffle_elect(0)
            EB[tx] = T.if_then_else(tx < 1, 1, 0)
            C[tx] = T.shuffle_elect(16)
            EC[tx] = T.if_then_else(tx // 32 * 32 == tx, 1, 0)

    return main
