# T.cummax: the inclusive running maximum along a dimension (from the end
# with reverse=True), of fragments (through shared scratch, as TileLang
# does) and of shared buffers in place, compared with the maximum over
# each prefix (suffix) computed element by element.
# CHECK: alloc %scan: shared i32[8, 16]
# CHECK: max(
# RUN-EQUAL: B = B_ref
# RUN-EQUAL: C = C_ref
# RUN-EQUAL: D = D_ref
import tilelang
import tilelang.language as T


@tilelang.jit
def cummax_scan(M=8, N=16):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), "int32"),
        B: T.Tensor((M, N), "int32"),
        B_ref: T.Tensor((M, N), "int32"),
        C: T.Tensor((M, N), "int32"),
        C_ref: T.Tensor((M, N), "int32"),
        D: T.Tensor((N,), "int32"),
        D_ref: T.Tensor((N,), "int32"),
    ):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            # Values that rise and fall along both dimensions.
            for i, j in T.Parallel(M, N):
                F[i, j] = A[i, j] * (i + 1) - (j % 5) * 3 + (i * j) % 7
            G = T.alloc_fragment((M, N), "int32")
            T.cummax(F, G, dim=1)
            T.copy(G, B)
            T.cummax(F, G, dim=0, reverse=True)
            T.copy(G, C)
            S = T.alloc_shared((N,), "int32")
            for j in T.Parallel(N):
                S[j] = F[3, j]
            T.cummax(S)
            T.copy(S, D)

            R = T.alloc_fragment((M, N), "int32")
            for i, k in T.Parallel(M, N):
                R[i, k] = F[i, 0]
                for j in T.serial(N):
                    if j <= k:
                        R[i, k] = T.max(R[i, k], F[i, j])
            T.copy(R, B_ref)
            for i, j in T.Parallel(M, N):
                R[i, j] = F[M - 1, j]
                for r in T.serial(M):
                    if r >= i:
                        R[i, j] = T.max(R[i, j], F[r, j])
            T.copy(R, C_ref)
            for i, k in T.Parallel(M, N):
                R[i, k] = F[3, 0]
                for j in T.serial(N):
                    if j <= k:
                        R[i, k] = T.max(R[i, k], F[3, j])
            T.copy(R[0, :], D_ref)

    return main
