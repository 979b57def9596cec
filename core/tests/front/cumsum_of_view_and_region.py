# Scans over a view and over a region of shared buffers: the whole of a
# (64,) buffer read as (1, 64) along dim 1, in place, and elements 16..47
# of another one scanned into a buffer of their own. C and D hold the same
# prefix sums computed by serial loops.
# RUN-EQUAL: B = C
# RUN-EQUAL: E = D
import tilelang
import tilelang.language as T


@tilelang.jit
def cumsum_of_view_and_region(dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((64,), dtype), B: T.Tensor((64,), dtype), C: T.Tensor((64,), dtype), D: T.Tensor((32,), dtype), E: T.Tensor((32,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), dtype)
            T.copy(A, S)
            T.cumsum(T.view(S, (1, 64)), dim=1)
            T.copy(S, B)
            R = T.alloc_shared((64,), dtype)
            O = T.alloc_shared((32,), dtype)
            T.copy(A, R)
            T.cumsum(R[16:48], O, dim=0)
            T.copy(O, E)
            acc = T.alloc_var(dtype)
            acc = 0
            for i in T.serial(64):
                acc += A[i]
                C[i] = acc
            acc2 = T.alloc_var(dtype)
            acc2 = 0
            for i in T.serial(32):
                acc2 += A[16 + i]
                D[i] = acc2

    return main
