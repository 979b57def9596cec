# CHECK: if %tx < 64 {
# CHECK: %B[%tx] = %A[%tx]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def thread_binding(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx < N:
                B[tx] = A[tx]

    return main
