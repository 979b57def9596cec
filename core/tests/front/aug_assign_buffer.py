# RUN
# CHECK: %F[%i] = %F[%i] + f32(1.0)
# CHECK: %F[%i] = %F[%i] * %A[%i]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def aug_assign_buffer(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((N,), "float32")
            T.copy(A, F)
            for i in T.Parallel(N):
                F[i] += 1
                F[i] *= A[i]
            T.copy(F, B)

    return main
