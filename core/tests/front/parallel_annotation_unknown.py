# `T.Parallel` accepts only the annotations that choose how its stores are
# issued; others are refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def parallel_annotation_unknown(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for j in T.Parallel(N, annotations={"parallel_loop_predicate": True}):  # ERROR: T0300
                B[j] = A[j]

    return main
