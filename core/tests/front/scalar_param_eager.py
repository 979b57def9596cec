# RUN-SYMBOL: n=3
import tilelang
import tilelang.language as T


# An eager kernel's signature annotations declare its parameters: a tensor
# annotation makes a tensor parameter, a dtype a scalar one.
# CHECK: func @scale(%A: global f16[4, 64], %n: i32, %B: global f16[4, 64])
# CHECK: for %i in serial(0, %n)
@tilelang.jit
def scale(A: T.Tensor((4, 64), T.float16), n: T.int32, B: T.Tensor((4, 64), T.float16)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((4, 64), T.float16)
        T.copy(A, S)
        for i in T.serial(n):
            S[0, i] = S[0, i] * 2.0
        T.copy(S, B)
