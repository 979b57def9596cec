# T.atomic_addx2 / T.atomic_addx4 add the 2 / 4 elements that start at the
# value element to those that start at the destination element, along the
# last dimension; the same as element-wise atomic adds.
# CHECK: atomic_add
# RUN-EQUAL: B = C
# RUN-EQUAL: D = E
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_add_pairs(M=4, N=16):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), "float32"),
        B: T.Tensor((M, N), "float32"),
        C: T.Tensor((M, N), "float32"),
        D: T.Tensor((M, N), "float32"),
        E: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(1, threads=32) as bx:
            T.copy(B, C)
            T.copy(D, E)
            for i, j in T.Parallel(M, N // 2):
                T.atomic_addx2(B[i, j * 2], A[i, j * 2])
            for i, j in T.Parallel(M, N):
                T.atomic_add(C[i, j], A[i, j])
            for i, j in T.Parallel(M, N // 4):
                T.atomic_addx4(D[i, j * 4], A[i, j * 4])
            for i, j in T.Parallel(M, N):
                T.atomic_add(E[i, j], A[i, j])

    return main
