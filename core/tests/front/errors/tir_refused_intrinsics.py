# KERNEL: warp_ops
import tilelang
import tilelang.language as T


@T.prim_func
def warp_ops(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        T.sync_warp(0xFFFF)  # ERROR: T0300
        T.tvm_storage_sync("global")  # ERROR: T0300
        G = T.decl_buffer((4,), "float32")  # ERROR: T0300
        A[0] = T.ieee_add(A[1], A[2], "ru")  # ERROR: T0300
