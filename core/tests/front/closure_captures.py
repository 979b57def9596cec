import tilelang
import tilelang.language as T


# KERNEL: closed()
# CHECK: alloc %S: shared f32[48]
def make(width):
    def tile():
        return width * 3

    @tilelang.jit(out_idx=[-1])
    def inner(N=96):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(N // tile(), threads=32) as bx:
                S = T.alloc_shared((tile(),), "float32")
                T.copy(A[bx * tile()], S)
                T.copy(S, B[bx * tile()])
        return main
    return inner


closed = make(16)
