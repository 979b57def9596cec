import tilelang
import tilelang.language as T


# CHECK: func @copy64(%A: global f32[64], %B: global f32[64]) {
# CHECK-NOT: attrs
@T.prim_func
def copy64(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.copy(A, B)
