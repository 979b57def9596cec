# KERNEL: kernel_call_kwargs(N=32, dtype="bfloat16")
# CHECK: %A: global bf16[32]
# CHECK: parallel (%i < 32)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel_call_kwargs(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main
