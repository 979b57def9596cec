# CHECK: fill %F[0 +: 16], f32(1.5)
# CHECK: fill %F[16 +: 48], f32(0.0)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fill_region(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((N,), "float32")
            T.fill(F[0:16], 1.5)
            T.clear(F[16:N])
            T.copy(F, B)

    return main
