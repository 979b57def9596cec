import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_bad_keyword(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((16, 16), "float16")
            C = T.alloc_fragment((16, 16), "float32")
            T.gemm(S, S, C, trans_B=True)  # ERROR: T0102

    return main
