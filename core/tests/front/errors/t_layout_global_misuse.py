# A layout on a global buffer changes what the kernel reads and writes,
# so one tilec cannot follow is an error, never a hint: it must place
# every element of the tensor once, inside the tensor, and a large one
# must be integer arithmetic of its indices.
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16"), B: T.Tensor((512, 256), "float16")):
    with T.Kernel(1, threads=128) as bx:
        T.annotate_layout({A: T.Layout((64, 64), lambda i, j: [i, j * 2])})  # ERROR: T0309
        T.annotate_layout({A: T.Layout((64, 64), lambda i, j: [i // 2, j])})  # ERROR: T0309
        T.annotate_layout({A: make_swizzled_layout(A)})  # ERROR: T0309
        T.annotate_layout({B: T.Layout((512, 256), lambda i, j: [i, 255 - j if i % 2 else j])})  # ERROR: T0300
        T.annotate_layout({B: T.Layout((512, 256), lambda i, j: [i - 1, j])})  # ERROR: T0309
        T.annotate_layout({B: T.Layout((4096, 4096), lambda i, j: [i, j])})  # ERROR: T0300
        T.copy(A, B[0:64, 0:64])
