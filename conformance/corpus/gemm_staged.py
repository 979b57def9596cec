"""Tiled matrix multiplication whose pipelined loop gives every statement an
explicit stage and issue order (`T.Pipelined(..., order=..., stage=...)`).

`schedule` picks the lists: "ahead1_late" copies one iteration ahead and
issues the copies after the gemm; "ahead2" copies two iterations ahead and
issues them first; "interleaved" ranks the gemm between the two copies;
"grouped" gives the two copies one entry through `group`; "producers"
marks the copies with a negative stage, as warp-specialized pipelines do;
"unfollowed" puts every statement in a stage of its own. Whatever a
compiler makes of the lists, C = A @ B with float32 accumulation, as
without them.
"""

import tilelang
import tilelang.language as T

SCHEDULES = {
    "ahead1_late": ([1, 2, 0], [0, 0, 1], None),
    "ahead2": ([0, 1, 2], [0, 0, 2], None),
    "interleaved": ([0, 2, 1], [0, 0, 2], None),
    "grouped": ([0, 1], [0, 1], [[0, 1], [2]]),
    "producers": ([-1, -1, 0], [-1, -1, 0], None),
    "unfollowed": ([0, 1, 2], [0, 1, 2], [[0], [1], [2]]),
}


@tilelang.jit(out_idx=[-1])
def matmul_staged(M=64, N=64, K=256, schedule="ahead1_late", block_M=64, block_N=64, block_K=32):
    order, stage, group = SCHEDULES[schedule]

    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(
                T.ceildiv(K, block_K), num_stages=3, order=order, stage=stage, group=group
            ):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main
