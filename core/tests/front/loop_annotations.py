# `T.serial(..., annotations={...})`: hints to TileLang's passes (here a
# software-pipeline schedule); the loop still runs its iterations in order.
# `T.Parallel(..., prefer_async=True)` issues its stores as cp.async in
# TileLang, completed by the user's commit and wait: tilec's stores are
# complete at once, so the values read after the wait are the same.
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def loop_annotations(N=32):
    @T.prim_func
    def main(A: T.Tensor((4, N), "float32"), B: T.Tensor((4, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((4, N), "float32")
            for k in T.serial(0, 4, annotations={"software_pipeline_stage": [0, 1], "software_pipeline_order": [0, 1]}):
                for j in T.Parallel(N, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                    S[k, j] = A[k, j]
                T.ptx_commit_group()
                T.ptx_wait_group(0)
                for j in T.Parallel(N):
                    B[k, j] = S[k, j]

    return main
