# RUN
# `T.Kernel` without grid extents launches one block; `T.ClusterKernel`
# launches blocks in clusters, which is how they are scheduled, not what
# they compute: staged as `kernel` with its grid.
# CHECK: kernel grid(1) threads(32)
# CHECK: kernel grid(2) threads(32)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel_launch_variants(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(threads=32):
            for i in T.Parallel(32):
                B[i] = A[i] + 1.0
        with T.ClusterKernel(2, cluster_dims=2, threads=32) as bx:
            if bx == 1:
                for i in T.Parallel(32):
                    B[32 + i] = A[32 + i] + 2.0

    return main
