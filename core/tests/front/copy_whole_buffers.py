# RUN-EQUAL: B = A
# CHECK: alloc %S: shared f16[64, 64]
# CHECK: copy %A[
# CHECK: -> %S[
# CHECK: copy %S[
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_whole_buffers(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, N), dtype)
            T.copy(A[bx * 64:(bx + 1) * 64, :], S)
            T.copy(S, B[bx * 64:(bx + 1) * 64, 0:N])

    return main
