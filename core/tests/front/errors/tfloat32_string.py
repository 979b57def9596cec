import tilelang.language as T


# Only the `T.tfloat32` name is staged as float32 (with its warning); the
# dtype string "tfloat32" is refused rather than taken as float32 silently.
@T.prim_func
def tf32_string(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        S = T.alloc_shared((64,), "tfloat32")  # ERROR: T0301
        T.copy(A, S)
        T.copy(S, A)
