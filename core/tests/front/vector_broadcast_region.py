# `T.Broadcast(v, n)` is a vector of `n` copies of `v`. Stored into a
# region `A[i:i + n]` it writes lane `k` at `A[i + k]`; `+` and `*`
# combine vectors (or a vector and a scalar) lane by lane. The whole
# vector is computed before its first lane is stored, so a vector that
# reads the region it is stored into sees the old values. Checked against
# the same values written element by element.
# RUN-EQUAL: Out = Ref
# RUN-EQUAL: Sum = SumRef
import tilelang
import tilelang.language as T


@tilelang.jit
def vector_broadcast(N=32):
    @T.prim_func
    def main(
        Src: T.Tensor((2,), "int8"),
        Out: T.Tensor((N,), "int8"),
        Ref: T.Tensor((N,), "int8"),
        Sum: T.Tensor((8,), "float32"),
        SumRef: T.Tensor((8,), "float32"),
    ):
        with T.Kernel(1, threads=1):
            packed = T.alloc_local((N,), "int8")
            packed[0:N] = T.Broadcast(Src[0], N)
            for i in T.serial(N):
                Out[i] = packed[i]
                Ref[i] = Src[0]
            S = T.alloc_shared((8,), "float32")
            S[0:8] = T.Broadcast(T.float32(1.5), 8) + T.Broadcast(T.cast(Src[1], "float32"), 8)
            S[4:8] = T.Broadcast(S[4], 4) * 2.0 + T.Broadcast(S[4], 4)
            for i in T.serial(8):
                Sum[i] = S[i]
            for i in T.serial(4):
                SumRef[i] = T.float32(1.5) + T.cast(Src[1], "float32")
            for i in T.serial(4):
                SumRef[4 + i] = (T.float32(1.5) + T.cast(Src[1], "float32")) * 3.0

    return main

