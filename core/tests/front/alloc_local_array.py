# CHECK: alloc %L: local f32[4]
# CHECK: %L[%v] = %A[%v] * f32(3.0)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def alloc_local_array(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            L = T.alloc_local((4,), "float32")
            for v in T.serial(4):
                L[v] = A[v] * 3
            for v in T.serial(4):
                B[v] = L[v]

    return main
