import tilelang
import tilelang.language as T


# CHECK: %A: global f32[%m, 64]
# CHECK: symbols(%m)
@tilelang.jit(out_idx=[-1])
def rows(N=64):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            S = T.alloc_shared((16, N), "float32")
            T.copy(A[bx * 16, 0], S)
            T.copy(S, B[bx * 16, 0])
    return main
