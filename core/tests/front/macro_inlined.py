import tilelang
import tilelang.language as T


# CHECK: parallel (%i < 32)
# CHECK: %acc[%i] = %acc[%i] * f32(2.0)
# CHECK: parallel (%i.1 < 32)
@tilelang.jit(out_idx=[-1])
def macro_user(N=32):
    @T.macro
    def double(buf):
        for i in T.Parallel(N):
            buf[i] = buf[i] * 2.0

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            acc = T.alloc_fragment((N,), "float32")
            T.copy(A, acc)
            double(acc)
            double(acc)
            T.copy(acc, B)
    return main
