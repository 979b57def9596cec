import tilelang.language as T


# The argument is a barrier (an element of `T.alloc_barrier`), not a
# shared-memory buffer.
@T.prim_func
def noinc_misuse(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((128,), "float32")
        T.cp_async_barrier_noinc(S[0])  # ERROR: T0309
        T.copy(S, A)
