# CHECK: fill %F[0 +: 64], f32(-inf)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def infinity_literals(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((N,), "float32")
            T.fill(F, -T.infinity("float32"))
            for i in T.Parallel(N):
                B[i] = T.max(F[i], A[i])

    return main
