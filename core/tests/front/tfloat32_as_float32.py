import tilelang.language as T


# `T.tfloat32` operands are staged as `T.float32` (with a warning at each
# mention): the gemm of TF32-typed tiles computes exactly what the gemm of
# float32 tiles does in tilec, more precisely than TileLang's TF32 gemm.
# A mention evaluated twice (the helper below) is warned about once.
# RUN-EQUAL: C = D
def operand_dtype():
    return T.tfloat32  # WARNING: W0003


@T.prim_func
def tf32_gemm(
    A: T.Tensor((32, 16), T.float32),
    B: T.Tensor((16, 32), T.float32),
    C: T.Tensor((32, 32), T.float32),
    D: T.Tensor((32, 32), T.float32),
):
    with T.Kernel(1, threads=128):
        As = T.alloc_shared((32, 16), T.tfloat32)  # WARNING: W0003
        Bs = T.alloc_shared((16, 32), operand_dtype())
        Bt = T.alloc_shared((16, 32), operand_dtype())
        Cf = T.alloc_fragment((32, 32), T.float32)
        T.copy(A, As)
        T.copy(B, Bt)
        T.copy(Bt, Bs)
        T.gemm(As, Bs, Cf, clear_accum=True)
        T.copy(Cf, C)
        As2 = T.alloc_shared((32, 16), T.float32)
        Bs2 = T.alloc_shared((16, 32), T.float32)
        Df = T.alloc_fragment((32, 32), T.float32)
        T.copy(A, As2)
        T.copy(B, Bs2)
        T.gemm(As2, Bs2, Df, clear_accum=True)
        T.copy(Df, D)
