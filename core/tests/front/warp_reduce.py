# `T.warp_reduce_*` combines one value per thread across each group of 32
# consecutive threads and gives every lane the result. Two warps here, so
# each half of the block gets its own warp's result: the sum of the lane
# numbers is 496, the maximum 31, their or all 32 bits set, and an int64
# sum keeps the bits above 32.
# RUN-EQUAL: S = ES
# RUN-EQUAL: M = EM
# RUN-EQUAL: O = EO
# RUN-EQUAL: L = EL
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_reduce_kernel(threads=64):
    @T.prim_func
    def main(
        S: T.Tensor((threads,), "float32"),
        ES: T.Tensor((threads,), "float32"),
        M: T.Tensor((threads,), "int32"),
        EM: T.Tensor((threads,), "int32"),
        O: T.Tensor((threads,), "int32"),
        EO: T.Tensor((threads,), "int32"),
        L: T.Tensor((threads,), "int64"),
        EL: T.Tensor((threads,), "int64"),
    ):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            lane = tx % 32
            v = T.alloc_local([1], "float32")
            v[0] = T.cast(lane, "float32")
            s = T.alloc_local([1], "float32")
            s[0] = T.warp_reduce_sum(v[0])
            S[tx] = s[0]
            ES[tx] = 496.0
            M[tx] = T.warp_reduce_max((lane * 7) % 32 + tx // 32)
            EM[tx] = 31 + tx // 32
            O[tx] = T.warp_reduce_bitor(1 << lane)
            EO[tx] = -1
            L[tx] = T.warp_reduce_sum(T.cast(lane, "int64") * 4294967296 + 1)
            EL[tx] = T.cast(496, "int64") * 4294967296 + 32

    return main
