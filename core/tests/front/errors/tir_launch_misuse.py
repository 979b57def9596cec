# KERNEL: cluster
import tilelang
import tilelang.language as T


@T.prim_func
def rebind_block(A: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=64):
        b = T.launch_thread("blockIdx.x", 2)  # ERROR: T0300
        t = T.launch_thread("threadIdx.x", 32)  # ERROR: T0300
        A[b + t] = 0.0


@T.prim_func
def twice(A: T.Tensor((64,), "float32")):
    tx = T.launch_thread("threadIdx.x", 64)
    ty = T.launch_thread("threadIdx.x", 64)  # ERROR: T0309
    A[tx] = 0.0


@T.prim_func
def symbolic_threads(A: T.Tensor((64,), "float32")):
    n = T.symbolic("n")
    tx = T.launch_thread("threadIdx.x", n)  # ERROR: T0306
    A[tx] = 0.0


@T.prim_func
def odd_tag(A: T.Tensor((64,), "float32")):
    v = T.launch_thread("vthread", 2)  # ERROR: T0300
    A[0] = 0.0


@T.prim_func
def cluster(A: T.Tensor((64,), "float32")):
    T.func_attr({"clusterIdx.y": 2})  # ERROR: T0300
    with T.Kernel(1, threads=64) as bx:
        A[bx] = 0.0
