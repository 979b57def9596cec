"""Matrix-vector product y = A @ x, A (N, K), x (K,), y (N,).

Each block owns block_N rows and walks K in block_K steps; the products of
a step are reduced along K into a float32 accumulator with
T.reduce_sum(..., clear=False). Ragged N and K rely on T.copy's
out-of-bounds rule.
"""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv(N=64, K=128, block_N=32, block_K=64, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((N, K), dtype),
        x: T.Tensor((K,), dtype),
        y: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bn:
            a = T.alloc_shared((block_N, block_K), dtype)
            xs = T.alloc_shared((block_K,), dtype)
            prod = T.alloc_fragment((block_N, block_K), "float32")
            acc = T.alloc_fragment((block_N,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bn * block_N, k * block_K], a)
                T.copy(x[k * block_K], xs)
                for i, j in T.Parallel(block_N, block_K):
                    prod[i, j] = a[i, j].astype("float32") * xs[j].astype("float32")
                T.reduce_sum(prod, acc, dim=1, clear=False)
            T.copy(acc, y[bn * block_N])

    return main
