# CHECK: select(%A[%i] > f32(0.0), %A[%i], %A[%i] * f32(0.00999
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def if_then_else_select(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.if_then_else(A[i] > 0, A[i], A[i] * 0.01)

    return main
