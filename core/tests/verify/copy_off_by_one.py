# A copy out of a shared tile whose region starts one row too late.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_rows(M=128, N=64, block_M=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            S = T.alloc_shared((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], S)
            T.copy(S[1 : block_M + 1, 0:N], B[bx * block_M : bx * block_M + block_M, 0:N])

    return main
