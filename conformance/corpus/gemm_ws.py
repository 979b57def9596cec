"""Matrix multiplication split into roles by hand (`T.ws`) that hand
shared-memory stages to each other through phased barriers
(`T.alloc_barrier`, `T.barrier_arrive`, `T.barrier_wait`).

`roles` picks which warp groups do what: "loader_second" has warp group 1
load the stages and warp group 0 multiply; "loader_first" swaps them, so
the multiplier's threads do not start at thread 0; "idle_group" launches
three warp groups, loads in warp group 2, multiplies in warp group 0 and
leaves warp group 1 without a role. `stages` is the number of stage
buffers. With `row_max`, the multiplier subtracts each row's maximum from
the row before storing it (a reduction and an element-wise nest inside a
role). Whatever the roles, C = A @ B with float32 accumulation (minus the
row maxima).
"""

import tilelang
import tilelang.language as T

ROLES = {
    "loader_second": (256, 1, 0),
    "loader_first": (256, 0, 1),
    "idle_group": (384, 2, 0),
}


@tilelang.jit(out_idx=[-1])
def matmul_ws(M=64, N=64, K=256, roles="loader_second", stages=2, row_max=False,
              block_M=64, block_N=64, block_K=32):
    threads, loader, multiplier = ROLES[roles]

    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), "float16")
            B_s = T.alloc_shared((stages, block_K, block_N), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            peak = T.alloc_fragment((block_M,), "float32")
            full = T.alloc_barrier([128] * stages)
            free = T.alloc_barrier([128] * stages)

            with T.ws(multiplier):
                T.clear(acc)
            for k in T.serial(T.ceildiv(K, block_K)):
                s = k % stages
                lap = k // stages
                with T.ws(loader):
                    T.barrier_wait(free[s], (lap + 1) % 2)
                    T.copy(A[by * block_M, k * block_K], A_s[s, :, :])
                    T.copy(B[k * block_K, bx * block_N], B_s[s, :, :])
                    T.barrier_arrive(full[s])
                with T.ws(multiplier):
                    T.barrier_wait(full[s], lap % 2)
                    T.gemm(A_s[s, :, :], B_s[s, :, :], acc)
                    T.barrier_arrive(free[s])
            with T.ws(multiplier):
                if row_max:
                    T.reduce_max(acc, peak, dim=1)
                    for i, j in T.Parallel(block_M, block_N):
                        acc[i, j] = acc[i, j] - peak[i]
                T.copy(acc, C[by * block_M, bx * block_N])

    return main
