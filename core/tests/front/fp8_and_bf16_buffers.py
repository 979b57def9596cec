# CHECK: cast<f8e4m3>(%A[%i])
# CHECK: cast<f8e5m2>(%A[%i])
# CHECK: cast<bf16>(%A[%i])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fp8_and_bf16_buffers(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.cast(A[i], "float8_e4m3fn").astype("float32") + T.cast(A[i], "float8_e5m2").astype("float32") + T.cast(A[i], "bfloat16")

    return main
