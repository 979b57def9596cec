"""Tiled matrix multiplication C = op(A) @ op(B).

A is (K, M) when trans_A else (M, K); B is (N, K) when trans_B else (K, N);
C is (M, N) in `dtype`, accumulated in `accum_dtype`. Each block computes a
(block_M, block_N) tile of C, walking K in block_K steps through a software
pipeline. Ragged sizes rely on T.copy's out-of-bounds rule: tiles that hang
over an edge load zeros (which add nothing to the product) and the parts of
the result tile outside C are not stored.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(
    M=256,
    N=256,
    K=256,
    block_M=128,
    block_N=128,
    block_K=32,
    trans_A=False,
    trans_B=False,
    dtype="float16",
    accum_dtype="float32",
    num_stages=2,
    threads=128,
):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor(A_shape, dtype),
        B: T.Tensor(B_shape, dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    cases = [
        dict(),
        dict(trans_A=True),
        dict(trans_B=True),
        dict(trans_A=True, trans_B=True),
        dict(M=257, N=129, K=77),
        dict(M=257, N=129, K=77, trans_B=True),
    ]
    for extra in cases:
        M, N, K = extra.get("M", 256), extra.get("N", 256), extra.get("K", 256)
        trans_A, trans_B = extra.get("trans_A", False), extra.get("trans_B", False)
        kernel = matmul(**extra)
        a = torch.randn(*((K, M) if trans_A else (M, K)), device="cuda", dtype=torch.float16)
        b = torch.randn(*((N, K) if trans_B else (K, N)), device="cuda", dtype=torch.float16)
        c = kernel(a, b)
        ref = (a.T if trans_A else a).float() @ (b.T if trans_B else b).float()
        torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-2)
        print(f"matmul {extra}: ok")
