import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((16, 32), "float16")
        F = T.alloc_fragment((16, 32), "float16")
        for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0], [2]]):  # ERROR: T0309
            T.copy(A[k * 16, 0], S)
            T.copy(S, F)
        for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0, 1]]):  # ERROR: T0309
            T.copy(A[k * 16, 0], S)
            T.copy(S, F)
        for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1], group=[0, 1]):  # ERROR: T0309
            T.copy(A[k * 16, 0], S)
            T.copy(S, F)
