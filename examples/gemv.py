"""Matrix-vector product y = A @ x with A (N, K), x (K,), y (N,).

Each block owns block_N output rows and walks K in block_K steps: the tile
products are formed in a float32 fragment and reduced along K into the
running accumulator with T.reduce_sum(..., clear=False).
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv(N=512, K=1024, block_N=64, block_K=128, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((N, K), dtype),
        x: T.Tensor((K,), dtype),
        y: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bn:
            A_shared = T.alloc_shared((block_N, block_K), dtype)
            x_shared = T.alloc_shared((block_K,), dtype)
            prod = T.alloc_fragment((block_N, block_K), accum_dtype)
            acc = T.alloc_fragment((block_N,), accum_dtype)

            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bn * block_N, k * block_K], A_shared)
                T.copy(x[k * block_K], x_shared)
                for i, j in T.Parallel(block_N, block_K):
                    prod[i, j] = A_shared[i, j].astype(accum_dtype) * x_shared[j].astype(accum_dtype)
                T.reduce_sum(prod, acc, dim=1, clear=False)
            T.copy(acc, y[bn * block_N])

    return main


if __name__ == "__main__":
    import torch

    for N, K in [(512, 1024), (200, 300)]:
        kernel = gemv(N, K)
        a = torch.randn(N, K, device="cuda", dtype=torch.float16)
        x = torch.randn(K, device="cuda", dtype=torch.float16)
        y = kernel(a, x)
        torch.testing.assert_close(y.float(), a.float() @ x.float(), rtol=1e-2, atol=5e-2)
        print(f"gemv {N}x{K}: ok")
