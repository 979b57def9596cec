# Bitwise reducers: `T.reducer_update` and `r[i] &= x` / `r[i] = r[i] | x`
# in a `T.Parallel` nest, compared with `T.reduce_bit*` of the same data.
# CHECK: fill %a[0 +: 8], -1
# CHECK: reduce bitand %red_acc
# CHECK: reduce bitor
# CHECK: reduce bitxor
# RUN-EQUAL: X = X_ref
# RUN-EQUAL: Y = Y_ref
# RUN-EQUAL: Z = Z_ref
import tilelang
import tilelang.language as T


@tilelang.jit
def reducer_bitwise(M=8, N=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), "int32"),
        X: T.Tensor((M,), "int32"),
        X_ref: T.Tensor((M,), "int32"),
        Y: T.Tensor((M,), "int32"),
        Y_ref: T.Tensor((M,), "int32"),
        Z: T.Tensor((M,), "int32"),
        Z_ref: T.Tensor((M,), "int32"),
    ):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((M, N), "int32")
            # A bit of its own in each row, so that an and is not 0.
            for i, j in T.Parallel(M, N):
                F[i, j] = A[i, j] | (1 << (i + 4))
            a = T.alloc_reducer((M,), "int32", op="bitand")
            T.reducer_init(a)
            for i, j in T.Parallel(M, N):
                a[i] &= F[i, j]
            T.finalize_reducer(a)
            T.copy(a, X)
            o = T.alloc_reducer((M,), "int32", op="bitor", replication="none")
            T.clear(o)
            for i, j in T.Parallel(M, N):
                o[i] = o[i] | F[i, j]
            T.finalize_reducer(o)
            T.copy(o, Y)
            x = T.alloc_reducer((M,), "int32", op="bitxor")
            T.reducer_init(x, 7)
            for j, i in T.Parallel(N, M):
                T.reducer_update(x[i], F[i, j])
            xr = T.alloc_fragment((M,), "int32")
            T.finalize_reducer(x, xr)
            T.copy(xr, Z)

            R = T.alloc_fragment((M,), "int32")
            T.reduce_bitand(F, R, dim=1)
            T.copy(R, X_ref)
            T.reduce_bitor(F, R, dim=1)
            T.copy(R, Y_ref)
            T.fill(R, 7)
            T.reduce_bitxor(F, R, dim=1, clear=False)
            T.copy(R, Z_ref)

    return main
