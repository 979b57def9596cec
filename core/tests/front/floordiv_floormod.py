# CHECK: %A[%i // 8 * 8 + %i % 8] + %A[%i // 4] + %A[%i % 4]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def floordiv_floormod(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i // 8 * 8 + i % 8] + A[T.floordiv(i, 4)] + A[T.floormod(i, 4)]

    return main
