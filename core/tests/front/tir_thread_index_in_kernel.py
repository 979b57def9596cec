# Inside a `T.Kernel`, binding threadIdx.x over the kernel's thread count
# names its thread index; lane, warp and warp-group indices derive from it.
import tilelang
import tilelang.language as T


@T.prim_func
def indices(
    Lane: T.Tensor((256,), "int32"),
    Warp: T.Tensor((256,), "int32"),
    Group: T.Tensor((256,), "int32"),
    Padded: T.Tensor((1,), "int32"),
):
    T.func_attr({"global_symbol": "indices", "tir.noalias": True})
    with T.Kernel(1, threads=256):
        tx = T.launch_thread("threadIdx.x", 256)
        t2 = T.thread_binding(0, 256, thread="threadIdx.x")
        T.evaluate(0)
        Lane[tx] = T.get_lane_idx()
        Warp[t2] = T.get_warp_idx()
        Group[tx] = T.get_warp_group_idx()
        if tx == 0:
            Padded[0] = T.align_up(100, 32)
