# CHECK: reduce sum %F -> %R, dim=1, clear=true
# CHECK: reduce max %F -> %R, dim=1, clear=false
# CHECK: reduce min %F -> %R, dim=1, clear=true
# CHECK: reduce abssum
# CHECK: reduce absmax
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce_all_kinds(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, N), dtype), B: T.Tensor((4, N), dtype)):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((4, N), "float32")
            R = T.alloc_fragment((4,), "float32")
            T.copy(A[0:4, :], F)
            T.reduce_sum(F, R, dim=1)
            T.reduce_max(F, R, dim=1, clear=False)
            T.reduce_min(F, R, dim=-1)
            T.reduce_abssum(F, R, 1)
            T.reduce_absmax(F, R, dim=1)
            T.copy(R, B[0:4, 0])

    return main
