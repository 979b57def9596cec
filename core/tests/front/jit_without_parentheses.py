import tilelang
import tilelang.language as T


# CHECK: func @main(%A: global f32[8], %B: global f32[8]) {
@tilelang.jit
def plain(N=8):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main
