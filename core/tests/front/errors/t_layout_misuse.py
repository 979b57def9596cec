import tilelang
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        T.annotate_layout({S: T.Layout((64, 64), lambda i, j: i)})  # ERROR: T0309
        T.annotate_layout({S: T.Layout((32, 64), lambda i, j: i * 64 + j)})  # ERROR: T0309
        T.annotate_layout({S: T.Layout((64, 64), lambda i, j: i - j)})  # ERROR: T0309
        T.annotate_layout({S: T.Layout((64, bx), lambda i, j: i)})  # ERROR: T0306
        T.annotate_layout({S: T.Layout((64,))})  # ERROR: T0102
        T.annotate_layout({S: T.Layout((64, 64), lambda i, j: [i << 40, j << 40])})  # ERROR: T0309
        T.copy(A, S)
