# `tl.disable_thread_storage_sync` has no effect in tilec (the lowering
# places the barriers it needs), so it is reported like any key tilec does
# not read; `tilec.follow_pipeline_lists` is read.
# KERNEL: copy_kernel()
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_thread_storage_sync": True})  # WARNING: W0001
def copy_kernel(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main


@tilelang.jit(out_idx=[-1], pass_configs={"tilec.follow_pipeline_lists": True})
def other_kernel(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(A, B)
    return main
