# TileLang's explicit Hopper gemm and its wait compute what T.gemm does.
# CHECK: gemm %A_s[0 +: 64, 0 +: 32], %B_s[0 +: 32, 0 +: 64], %C_f[0 +: 64, 0 +: 64], policy=square, clear=true
# RUN-EQUAL: C = D
import tilelang
import tilelang.language as T


@tilelang.jit
def wgmma_gemm_explicit(M=64, N=64, K=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        C: T.Tensor((M, N), "float32"),
        D: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            C_f = T.alloc_fragment((M, N), "float32")
            D_f = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.wgmma_gemm(A_s, B_s, C_f, clear_accum=True, annotations={})
            T.wait_wgmma(0)
            T.gemm(A_s, B_s, D_f, clear_accum=True)
            T.copy(C_f, C)
            T.copy(D_f, D)

    return main
