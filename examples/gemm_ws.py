"""Matrix multiplication with explicit warp specialization and barriers.

The block has two warp groups. Warp group 1 (threads 128-255) is the
loader: it copies tiles of A and B into `num_stages` shared-memory stages.
Warp group 0 (threads 0-127) is the multiplier: it accumulates the product
of each stage into its fragment and finally stores the result. Two arrays
of phased barriers hand the stages back and forth: `loaded[s]` completes a
phase each time the loader's 128 threads have filled stage `s`, and
`consumed[s]` each time the multiplier's have finished reading it. The
loader waits for the phase of `consumed[s]` before the one it is about to
overwrite, which on the first pass over the stages is the phase before
phase 0: a wait for parity 1 on a fresh barrier returns at once.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_ws(
    M=256,
    N=256,
    K=256,
    block_M=128,
    block_N=128,
    block_K=32,
    num_stages=2,
    dtype="float16",
    accum_dtype="float32",
):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_stages = T.alloc_shared((num_stages, block_M, block_K), dtype)
            B_stages = T.alloc_shared((num_stages, block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            loaded = T.alloc_barrier([128] * num_stages)
            consumed = T.alloc_barrier([128] * num_stages)

            with T.ws(0):
                T.clear(C_local)
            for k in T.serial(T.ceildiv(K, block_K)):
                s = k % num_stages
                parity = (k // num_stages) % 2
                with T.ws(1):
                    T.barrier_wait(consumed[s], parity ^ 1)
                    T.copy(A[by * block_M, k * block_K], A_stages[s, :, :])
                    T.copy(B[k * block_K, bx * block_N], B_stages[s, :, :])
                    T.barrier_arrive(loaded[s])
                with T.ws(0):
                    T.barrier_wait(loaded[s], parity)
                    T.gemm(A_stages[s, :, :], B_stages[s, :, :], C_local)
                    T.barrier_arrive(consumed[s])
            with T.ws(0):
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    for extra in [dict(), dict(M=257, N=129, K=77), dict(num_stages=3, block_K=64)]:
        M, N, K = extra.get("M", 256), extra.get("N", 256), extra.get("K", 256)
        kernel = matmul_ws(**extra)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = kernel(a, b)
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-2)
        print(f"matmul_ws {extra}: ok")
