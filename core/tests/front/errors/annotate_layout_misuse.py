import tilelang
import tilelang.language as T
from tilelang.layout import make_full_bank_swizzled_layout, make_swizzled_layout


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 48), "float16")
        R = T.alloc_shared((64, 64), "float16")
        F = T.alloc_fragment((64, 64), "float32")
        T.annotate_layout({S: make_full_bank_swizzled_layout(S)})  # ERROR: T0309
        T.annotate_layout({F: make_swizzled_layout(F)})  # ERROR: T0309
        T.annotate_layout({R: make_swizzled_layout(S)})  # ERROR: T0309
        T.annotate_layout({bx: make_swizzled_layout(R)})  # ERROR: T0309
        T.annotate_layout([R])  # ERROR: T0102
        T.annotate_layout({R: make_swizzled_layout(bx)})  # ERROR: T0102
        T.copy(A, R)
