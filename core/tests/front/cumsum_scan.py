# CHECK: cumsum %S -> %S, dim=0
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def cumsum_scan(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.cumsum(S, dim=0)
            T.copy(S, B)

    return main
