import tilelang
import tilelang.language as T


# CHECK: let %y: f32 = %A[%i] * f32(0.5) + f32(1.0)
def affine(x, scale, shift):
    return x * scale + shift

@tilelang.jit(out_idx=[-1])
def helper(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                y = affine(A[i], 0.5, 1.0)
                B[i] = y
    return main
