import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def several_errors_reported(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((16,), "float32")
            T.copy(A[0:8], S)  # ERROR: T0302
            x = undefined_thing  # ERROR: T0101
            B[0] = x
            T.copy(S, B[0:16])
            T.gemm(A, B, S)  # ERROR: T0303

    return main
