import tilelang
import tilelang.language as T


# CHECK: %B[%i] = exp2(%A[%i] * f32(1.4426950216293335))
@tilelang.jit(out_idx=[-1])
def macro_value(N=32):
    @T.macro
    def to_exp2(x):
        return T.exp2(x * 1.442695)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = to_exp2(A[i])
    return main
