import tilelang
import tilelang.language as T


# A block split by hand on the thread index, as TileLang's hand-written
# warp-specialized kernels do: the threads `lo <= tx < hi` (whole warps)
# load tiles, multiply them with `T.gemm` and reduce the product's rows;
# the other threads double a vector meanwhile. The gemm and the reduction
# run on the guarded threads alone, split among their warps.
# KERNEL: guard_gemm()
# RUN
def guard_gemm(M=64, N=32, K=64, block_K=32, threads=256, lo=0, hi=128):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float32"),
        R: T.Tensor((M,), "float32"),
        X: T.Tensor((threads,), "float32"),
        Y: T.Tensor((threads,), "float32"),
    ):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            A_s = T.alloc_shared((M, block_K), "float16")
            B_s = T.alloc_shared((block_K, N), "float16")
            C_f = T.alloc_fragment((M, N), "float32")
            r = T.alloc_fragment((M,), "float32")
            if tx >= lo and tx < hi:
                T.clear(C_f)
                for k in T.serial(K // block_K):
                    T.copy(A[0, k * block_K], A_s)
                    T.copy(B[k * block_K, 0], B_s)
                    T.gemm(A_s, B_s, C_f)
                T.reduce_sum(C_f, r, dim=1)
                T.copy(C_f, C)
                T.copy(r, R)
            else:
                for i in T.Parallel(threads):
                    Y[i] = X[i] * 2.0

    return main
