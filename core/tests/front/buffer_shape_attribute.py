# CHECK: alloc %S: shared f32[4, 64]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def buffer_shape_attribute(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, N), dtype), B: T.Tensor((4, N), dtype)):
        with T.Kernel(1, threads=64) as bx:
            rows, cols = A.shape
            S = T.alloc_shared((rows, cols), A.dtype)
            T.copy(A, S)
            T.copy(S, B)

    return main
