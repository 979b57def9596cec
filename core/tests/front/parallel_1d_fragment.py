# CHECK: parallel (%i < 64)
# CHECK: %acc[%i] = f32(0.0)
# CHECK: parallel (%i.1 < 64)
# CHECK: cast<f16>(%acc[%i.1])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def parallel_1d_fragment(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            acc = T.alloc_fragment((64,), "float32")
            for i in T.Parallel(64):
                acc[i] = 0
            for i in T.Parallel(64):
                B[bx * 64 + i, 0] = acc[i]

    return main
