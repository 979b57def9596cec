# Elements of `T.reshape` / `T.view` views are the elements of the viewed
# buffer at the same row-major offset, for loads and stores, global and
# shared.
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def view_reshape_elements(N=128, M=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype)):
        with T.Kernel(1, threads=128) as bx:
            a2 = T.reshape(A, [N // M, M])
            S = T.alloc_shared((N,), dtype)
            s2 = T.view(S, (M, N // M))
            for i, j in T.Parallel(N // M, M):
                S[i * M + j] = a2[i, j]
            b1 = T.reshape(B, [N])
            for k in T.Parallel(N):
                b1[k] = s2[k // (N // M), k % (N // M)]

    return main
