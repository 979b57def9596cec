import tilelang
import tilelang.language as T


# A matrix product on a block split by hand, as TileLang's hand-written
# warp-specialized kernels are: the threads `tx >= 128` load stages of A
# and B, the threads `tx < 128` multiply them into their accumulator, and
# phased barriers hand the stages back and forth. `split_gemm_ws` is the
# same kernel written with `T.ws` roles, which mean the same thing.
# KERNEL: split_gemm()
def split_gemm(M=72, N=40, K=80, block_M=64, block_N=32, block_K=16, num_stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_stages = T.alloc_shared((num_stages, block_M, block_K), "float16")
            B_stages = T.alloc_shared((num_stages, block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_barrier([128] * num_stages)
            consumed = T.alloc_barrier([128] * num_stages)
            tx = T.get_thread_binding()
            if tx >= 128:
                T.set_max_nreg(40, 0)
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % num_stages
                    T.barrier_wait(consumed[s], (k // num_stages) % 2 ^ 1)
                    T.copy(A[by * block_M, k * block_K], A_stages[s, :, :])
                    T.copy(B[k * block_K, bx * block_N], B_stages[s, :, :])
                    T.barrier_arrive(loaded[s])
            else:
                T.set_max_nreg(232, 1)
                T.clear(C_local)
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % num_stages
                    T.barrier_wait(loaded[s], (k // num_stages) % 2)
                    T.gemm(A_stages[s, :, :], B_stages[s, :, :], C_local)
                    T.barrier_arrive(consumed[s])
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def split_gemm_ws(M=72, N=40, K=80, block_M=64, block_N=32, block_K=16, num_stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_stages = T.alloc_shared((num_stages, block_M, block_K), "float16")
            B_stages = T.alloc_shared((num_stages, block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_barrier([128] * num_stages)
            consumed = T.alloc_barrier([128] * num_stages)
            with T.ws(1):
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % num_stages
                    T.barrier_wait(consumed[s], (k // num_stages) % 2 ^ 1)
                    T.copy(A[by * block_M, k * block_K], A_stages[s, :, :])
                    T.copy(B[k * block_K, bx * block_N], B_stages[s, :, :])
                    T.barrier_arrive(loaded[s])
            with T.ws(0):
                T.clear(C_local)
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % num_stages
                    T.barrier_wait(loaded[s], (k // num_stages) % 2)
                    T.gemm(A_stages[s, :, :], B_stages[s, :, :], C_local)
                    T.barrier_arrive(consumed[s])
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main
