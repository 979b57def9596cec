import tilelang
import tilelang.language as T


# A tensor parameter may have an extent of 0, as in TileLang: a product over
# an empty K runs its loop no times and leaves the cleared accumulator, and
# every element of the empty tensors reads as zero (out of bounds).
# RUN-EQUAL: C = Z
# RUN-EQUAL: D = O
@T.prim_func
def empty_k(
    A: T.Tensor((64, 0), "float16"),
    B: T.Tensor((0, 32), "float16"),
    C: T.Tensor((64, 32), "float32"),
    D: T.Tensor((64,), "float32"),
    Z: T.Tensor((64, 32), "float32"),
    O: T.Tensor((64,), "float32"),
):
    with T.Kernel(1, threads=128):
        A_s = T.alloc_shared((64, 16), "float16")
        B_s = T.alloc_shared((16, 32), "float16")
        acc = T.alloc_fragment((64, 32), "float32")
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(0, 16), num_stages=2):
            T.copy(A[0, k * 16], A_s)
            T.copy(B[k * 16, 0], B_s)
            T.gemm(A_s, B_s, acc)
        T.copy(acc, C)
        T.fill(Z, 0)
        for i in T.Parallel(64):
            D[i] = T.cast(A[i, 0], "float32") + 1
        T.fill(O, 1)
