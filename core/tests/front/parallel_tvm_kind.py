# `T.parallel` is TVM's parallel loop kind, which TileLang's `T.Parallel`
# builds: `T.parallel(n)` and `T.parallel(0, n)` are `T.Parallel(n)`.
# RUN-EQUAL: B = A
# CHECK: parallel (%i < 64)
import tilelang
import tilelang.language as T


@T.prim_func
def copy_twice(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((64,), "float32")
        for i in T.parallel(64):
            S[i] = A[i]
        for i in T.parallel(0, 64, annotations={"note": 1}):
            B[i] = S[i]
