# CHECK: alloc %F: fragment f32[64, 64]
# CHECK: copy %A
# CHECK: copy %F
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_cast_fragment_to_global(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            F = T.alloc_fragment((64, N), "float32")
            T.copy(A[bx * 64, 0], F)
            T.copy(F, B[bx * 64, 0])

    return main
