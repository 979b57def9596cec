# T.wgmma_gemm has no k_pack: an eighth positional argument is an error.
import tilelang
import tilelang.language as T


@tilelang.jit
def wgmma_gemm_too_many(M=64, N=64, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            C_f = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.wgmma_gemm(A_s, B_s, C_f, False, False, T.GemmWarpPolicy.Square, True, {}, 2)  # ERROR: T0102
            T.copy(C_f, C)

    return main
