# `T.ClusterKernel` needs its cluster shape; more than three grid extents
# is no launch.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def cluster_kernel_misuse(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.ClusterKernel(2, threads=32) as bx:  # ERROR: T0102
            B[bx] = A[bx]
        with T.Kernel(1, 1, 1, 1, threads=32) as bx:  # ERROR: T0309
            B[bx] = A[bx]

    return main
