# CHECK: exp(%A[%i]) + exp2(%A[%i]) + log(%A[%i]) + log2(%A[%i]) + sqrt(%A[%i]) + rsqrt(%A[%i]) + abs(%A[%i]) + sigmoid(%A[%i]) + tanh(%A[%i])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def math_functions(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.exp(A[i]) + T.exp2(A[i]) + T.log(A[i]) + T.log2(A[i]) + T.sqrt(A[i]) + T.rsqrt(A[i]) + T.abs(A[i]) + T.sigmoid(A[i]) + T.tanh(A[i])

    return main
