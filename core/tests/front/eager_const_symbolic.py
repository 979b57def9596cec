import tilelang
import tilelang.language as T


# CHECK: func @scale(%X: global f16[%M, 256], %Y: global f16[%M, 256])
# CHECK: symbols(%M)
# CHECK: kernel grid((%M + 32 - 1) // 32)
@tilelang.jit
def scale(X, factor=2.0):
    M = T.const("M")
    X: T.Tensor((M, 256), "float16")
    Y = T.empty((M, 256), "float16")
    with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
        for i, j in T.Parallel(32, 256):
            Y[bx * 32 + i, j] = X[bx * 32 + i, j] * factor
    return Y
