# RUN-EQUAL: B = A
# TileLang's short dtype names include the unsigned ones: "uint" is
# uint32 and "ulong" uint64, as strings and through `T.dtype`.
# CHECK: A: global u32[64]
# CHECK: B: global u32[64]
# CHECK: C: global u64[64]
import tilelang
import tilelang.language as T


@tilelang.jit
def copy_unsigned(M=64, fmt="uint"):
    storage = T.dtype(fmt)
    assert storage == T.uint32 and T.dtype("ulong") == T.uint64

    @T.prim_func
    def main(A: T.Tensor((M,), storage), B: T.Tensor((M,), "uint"), C: T.Tensor((M,), "ulong")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(M):
                B[i] = A[i]

    return main
