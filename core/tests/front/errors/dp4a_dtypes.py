import tilelang.language as T


# `T.dp4a` multiplies signed bytes into an int32: other dtypes are refused,
# as TileLang refuses them.
@T.prim_func
def dp4a_dtypes(A: T.Tensor((4,), "uint8"), B: T.Tensor((4,), "uint8"), C: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=1):
        T.dp4a(A, B, C)  # ERROR: T0103
