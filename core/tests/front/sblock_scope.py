import tilelang
import tilelang.language as T


# `with T.sblock("name"):` is a named scope whose body runs where it stands;
# `T.reads` / `T.writes` inside it change nothing. A safe value annotated in
# a block holds for that block's loads: the inner block pads with -5, the
# outer one with 9 again after the inner block ends. `R` and `Q` spell the
# expected values out.
# RUN-EQUAL: P = R
# RUN-EQUAL: O = Q
@T.prim_func
def scoped(
    A: T.Tensor((30, 30), "int32"),
    P: T.Tensor((32, 32), "int32"),
    O: T.Tensor((32, 32), "int32"),
    R: T.Tensor((32, 32), "int32"),
    Q: T.Tensor((32, 32), "int32"),
):
    with T.Kernel(1, threads=128):
        inner = T.alloc_shared((32, 32), "int32")
        outer = T.alloc_shared((32, 32), "int32")
        with T.sblock("outer"):
            T.reads(A[0:32, 0:32])
            T.writes()
            T.annotate_safe_value({A: 9})
            with T.sblock("inner"):
                T.reads(A[0:32, 0:32])
                T.writes(inner[0:32, 0:32])
                T.annotate_safe_value({A: -5})
                T.copy(A[0:32, 0:32], inner)
            T.copy(A[0:32, 0:32], outer)
        for i, j in T.Parallel(32, 32):
            with T.sblock("store"):
                P[i, j] = inner[i, j]
                O[i, j] = outer[i, j]
        for i, j in T.Parallel(32, 32):
            R[i, j] = T.if_then_else(i < 30 and j < 30, A[T.min(i, 29), T.min(j, 29)], -5)
            Q[i, j] = T.if_then_else(i < 30 and j < 30, A[T.min(i, 29), T.min(j, 29)], 9)
