# T.reduce_bitand / T.reduce_bitor / T.reduce_bitxor combine the bits of
# integers along a dimension (identity all ones, 0, 0; with clear=False
# starting from the output's values), compared with serial loops over the
# same data, on signed and unsigned dtypes.
# CHECK: reduce bitand %F -> %R, dim=1, clear=true
# CHECK: reduce bitor %F -> %R, dim=1, clear=false
# CHECK: reduce bitxor %G -> %U, dim=0, clear=true
# RUN-EQUAL: B = B_ref
# RUN-EQUAL: C = C_ref
# RUN-EQUAL: D = D_ref
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_bitwise(M=8, N=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), "int32"),
        E: T.Tensor((M, N), "uint8"),
        B: T.Tensor((M,), "int32"),
        B_ref: T.Tensor((M,), "int32"),
        C: T.Tensor((M,), "int32"),
        C_ref: T.Tensor((M,), "int32"),
        D: T.Tensor((N,), "uint8"),
        D_ref: T.Tensor((N,), "uint8"),
    ):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            R = T.alloc_fragment((M,), "int32")
            # A bit of its own in each row, so that an and is not 0.
            for i, j in T.Parallel(M, N):
                F[i, j] = A[i, j] | (1 << (i + 4))
            T.reduce_bitand(F, R, dim=1)
            T.copy(R, B)
            # Or into what the output holds: the and of each row.
            T.reduce_bitor(F, R, dim=1, clear=False)
            T.copy(R, C)
            G = T.alloc_fragment((M, N), "uint8")
            U = T.alloc_fragment((N,), "uint8")
            T.copy(E, G)
            T.reduce_bitxor(G, U, dim=0)
            T.copy(U, D)

            # The same with serial loops.
            S = T.alloc_fragment((M,), "int32")
            for i in T.Parallel(M):
                S[i] = -1
                for j in T.serial(N):
                    S[i] = S[i] & F[i, j]
            T.copy(S, B_ref)
            for i in T.Parallel(M):
                for j in T.serial(N):
                    S[i] = S[i] | F[i, j]
            T.copy(S, C_ref)
            V = T.alloc_fragment((N,), "uint8")
            for j in T.Parallel(N):
                V[j] = 0
                for i in T.serial(M):
                    V[j] = V[j] ^ G[i, j]
            T.copy(V, D_ref)

    return main
