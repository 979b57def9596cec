# RUN-SYMBOL: n=64
# RUN-EQUAL: B = A
# A prefix of run-time length copied into a constant shared buffer: the
# copy loops over the shared side (TileLang's rule), so with n = 64 the
# whole of A arrives in B; a shorter A would leave zeros past its end.
import tilelang.language as T

n = T.symbolic("n")


@T.prim_func
def prefix(A: T.Tensor((n,), "int32"), B: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=32):
        S = T.alloc_shared((64,), "int32")
        T.fill(S, 7)
        T.copy(A[0:n], S)
        T.copy(S, B)
