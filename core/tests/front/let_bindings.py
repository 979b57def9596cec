# CHECK: let %x: f32 = %A[%i] * f32(2.0)
# CHECK: let %y: f32 = %x + f32(1.0)
# CHECK: %B[%i] = %x * %y
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def let_bindings(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                x = A[i] * 2
                y = x + 1
                B[i] = x * y

    return main
