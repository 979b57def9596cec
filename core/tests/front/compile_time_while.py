import tilelang
import tilelang.language as T


# CHECK: alloc %S: shared f32[64]
@tilelang.jit(out_idx=[-1])
def grow(N=64):
    tile = 1
    while tile < N:
        tile *= 2

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((tile,), "float32")
            T.copy(A, S)
            T.copy(S, B)
    return main
