# dynamic_store_no_assume.py with the fact that makes it safe.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def stage():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.assume(N <= 256)
            S = T.alloc_shared((256,), "float32")
            for i in T.serial(N):
                S[i] = A[i]
            for i in T.serial(N):
                B[i] = S[i] * 2.0

    return main
