# TileLang's warp shuffles: each thread reads the value of another lane of
# its group of `width` consecutive lanes (32 unless given), and a source
# lane past the group gives the thread its own value. Two warps here, and
# each result is compared with the source lane's value written out from the
# thread index. The last output is a butterfly of `T.shfl_xor`s in a loop:
# each warp's sum of thread indices, 1024 * warp + 496.
# RUN-EQUAL: A = EA
# RUN-EQUAL: B = EB
# RUN-EQUAL: C = EC
# RUN-EQUAL: D = ED
# RUN-EQUAL: E = EE
# RUN-EQUAL: F = EF
# RUN-EQUAL: G = EG
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_shuffles(threads=64):
    @T.prim_func
    def main(
        A: T.Tensor((threads,), "int32"),
        EA: T.Tensor((threads,), "int32"),
        B: T.Tensor((threads,), "int32"),
        EB: T.Tensor((threads,), "int32"),
        C: T.Tensor((threads,), "float32"),
        EC: T.Tensor((threads,), "float32"),
        D: T.Tensor((threads,), "int32"),
        ED: T.Tensor((threads,), "int32"),
        E: T.Tensor((threads,), "int32"),
        EE: T.Tensor((threads,), "int32"),
        F: T.Tensor((threads,), "float32"),
        EF: T.Tensor((threads,), "float32"),
        G: T.Tensor((threads,), "int32"),
        EG: T.Tensor((threads,), "int32"),
    ):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            lane = tx % 32
            v = tx * 10 + 1
            f = T.cast(tx, "float32") * 0.5
            # Lane 31 of the warp.
            A[tx] = T.shfl_sync(v, 31)
            EA[tx] = (tx - lane + 31) * 10 + 1
            # Lane 35 % 16 = 3 of each group of 16.
            B[tx] = T.shfl_sync(v, 35, width=16)
            EB[tx] = (tx - tx % 16 + 3) * 10 + 1
            C[tx] = T.shfl_xor(f, 5)
            EC[tx] = T.cast(tx - lane + (lane ^ 5), "float32") * 0.5
            # lane ^ 20 is in the later group of 16 for lanes 0..15 (their
            # own value) and in the earlier one for lanes 16..31.
            D[tx] = T.shfl_xor(v, 20, 16)
            ED[tx] = T.if_then_else(lane >= 16, (tx - lane + (lane ^ 20)) * 10 + 1, v)
            E[tx] = T.shfl_down(v, 3)
            EE[tx] = T.if_then_else(lane + 3 < 32, v + 30, v)
            F[tx] = T.shfl_up(f, delta=8, width=16)
            EF[tx] = T.if_then_else(tx % 16 >= 8, f - 4.0, f)
            acc = T.alloc_local([1], "int32")
            acc[0] = tx
            for i in T.serial(5):
                acc[0] = acc[0] + T.shfl_xor(acc[0], 1 << i)
            G[tx] = acc[0]
            EG[tx] = (tx // 32) * 1024 + 496

    return main
