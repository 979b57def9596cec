# A reducer that the iterations of a `T.Parallel` nest accumulate into:
# TileLang's older form (`replication=`, `r[i] += ...`, in-place
# `T.finalize_reducer`) and the newer one (`T.reducer_init` /
# `T.reducer_update` / `T.finalize_reducer(acc, dst)`), compared with
# `T.reduce_*` of the same data. Integers, so the sums are exact.
# CHECK: fill %red_acc
# CHECK: reduce sum %red_acc
# CHECK: reduce max
# RUN-EQUAL: S = S_ref
# RUN-EQUAL: X = X_ref
# RUN-EQUAL: T1 = T_ref
# RUN-EQUAL: P = P_ref
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_accumulate(M=8, N=16, K=64, BK=16):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "int32"),
        S: T.Tensor((M,), "int32"),
        S_ref: T.Tensor((M,), "int32"),
        X: T.Tensor((M,), "int32"),
        X_ref: T.Tensor((M,), "int32"),
        T1: T.Tensor((1,), "int32"),
        T_ref: T.Tensor((1,), "int32"),
        P: T.Tensor((2, 2), "int32"),
        P_ref: T.Tensor((2, 2), "int32"),
    ):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, BK), "int32")
            # Row sums over the K tiles, older form.
            s = T.alloc_reducer((M,), "int32", op="sum", replication="all")
            T.clear(s)
            for k in T.serial(K // BK):
                T.copy(A[0, k * BK], F)
                for i, j in T.Parallel(M, BK):
                    s[i] += F[i, j]
            T.finalize_reducer(s)
            T.copy(s, S)
            # Row maxima, newer form, the row index second in the nest.
            x = T.alloc_reducer((M,), "int32", op="max")
            T.reducer_init(x)
            for k in T.serial(K // BK):
                T.copy(A[0, k * BK], F)
                for j, i in T.Parallel(BK, M):
                    T.reducer_update(x[i], F[i, j])
            xr = T.alloc_fragment((M,), "int32")
            T.finalize_reducer(x, xr)
            T.copy(xr, X)
            # One total with a starting value, only the even columns.
            t = T.alloc_reducer((1,), "int32", op="sum")
            T.reducer_init(t, 5)
            T.copy(A[0, 0], F)
            for i, j in T.Parallel(M, BK):
                if j % 2 == 0:
                    t[0] = t[0] + F[i, j]
            T.finalize_reducer(t)
            T.copy(t, T1)
            # Elements chosen by serial loops around the nest: the
            # combination runs in serial loops too.
            p = T.alloc_reducer((2, 2), "int32", op="sum")
            T.reducer_init(p)
            for a in T.serial(2):
                for b in T.serial(2):
                    for k in T.Parallel(BK):
                        T.reducer_update(p[a, b], F[a, k] * F[b, k])
            T.finalize_reducer(p)
            T.copy(p, P)

            # The same with reductions.
            G = T.alloc_fragment((M, K), "int32")
            R = T.alloc_fragment((M,), "int32")
            T.copy(A, G)
            T.reduce_sum(G, R, dim=1)
            T.copy(R, S_ref)
            T.reduce_max(G, R, dim=1)
            T.copy(R, X_ref)
            E = T.alloc_fragment((M, BK), "int32")
            for i, j in T.Parallel(M, BK):
                E[i, j] = T.if_then_else(j % 2 == 0, F[i, j], 0)
            R2 = T.alloc_fragment((M,), "int32")
            T.reduce_sum(E, R2, dim=1)
            R1 = T.alloc_fragment((1,), "int32")
            T.reduce_sum(R2, R1, dim=0)
            R1[0] = R1[0] + 5
            T.copy(R1, T_ref)
            H = T.alloc_fragment((BK,), "int32")
            Q = T.alloc_fragment((2, 2), "int32")
            for a in T.serial(2):
                for b in T.serial(2):
                    for k in T.Parallel(BK):
                        H[k] = F[a, k] * F[b, k]
                    T.reduce_sum(H, R1, dim=0)
                    Q[a, b] = R1[0]
            T.copy(Q, P_ref)

    return main
