import tilelang
import tilelang.language as T


# CHECK: kernel grid(4) threads(128) block(%bx) thread(%tx) {
# CHECK: kernel grid(1) threads(32) block(%bx.1) thread(%tx.1) {
@tilelang.jit(out_idx=[-1])
def two_phase(N=256):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Tmp: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for i in T.Parallel(64):
                Tmp[bx * 64 + i] = A[bx * 64 + i] * 2
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = Tmp[i] + 1
    return main
