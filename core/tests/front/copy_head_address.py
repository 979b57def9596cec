# CHECK: copy %A[%bx * 64 +: 64, 16 +: 32] -> %S
# CHECK: -> %B[%bx * 64 +: 64, 32 +: 32]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_head_address(M=128, N=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            S = T.alloc_shared((64, 32), dtype)
            T.copy(A[bx * 64, 16], S)
            T.copy(S, B[bx * 64, 32])

    return main
