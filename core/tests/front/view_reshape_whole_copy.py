# A whole reshaped buffer copied to a buffer of the new shape: a 1-D
# buffer read as rows, and a 2-D shared tile read back as one row. Neither
# view is a box of its buffer with the view's shape, so each copy pairs
# elements by their row-major offset.
# RUN-EQUAL: B = A
# RUN-EQUAL: C = A
import tilelang
import tilelang.language as T


@tilelang.jit
def view_reshape_whole_copy(N=256, M=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            rows = T.reshape(A, [N // M, M])
            T.copy(rows, B)
            S = T.alloc_shared((N // M, M), dtype)
            T.copy(B, S)
            flat = T.reshape(S, [N])
            F = T.alloc_fragment((N,), dtype)
            T.copy(flat, F)
            T.copy(F, C)

    return main
