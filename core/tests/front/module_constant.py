# CHECK: %B[%i] = %A[%i] * f32(0.25) + f32(3.0)
import tilelang
import tilelang.language as T

SCALE = 1 / 4
OFFSET = float(3)

@tilelang.jit(out_idx=[-1])
def module_constant(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * SCALE + OFFSET

    return main
