# CHECK: cast<f32>(cast<f16>(%A[%i])) + cast<f32>(cast<i32>(%A[%i]))
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def casts_and_astype(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = T.cast(A[i], "float16").astype("float32") + T.Cast("float32", T.cast(A[i], "int32"))

    return main
