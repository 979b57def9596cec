# CHECK: reduce max %F -> %R, dim=0, clear=true
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce_dim0(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, N), dtype), B: T.Tensor((4, N), dtype)):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((4, N), "float32")
            R = T.alloc_fragment((N,), "float32")
            T.copy(A, F)
            T.reduce_max(F, R, dim=0)
            T.copy(R, B[0, :])

    return main
