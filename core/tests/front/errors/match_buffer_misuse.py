# KERNEL: unmatched
import tilelang
import tilelang.language as T


@T.prim_func
def unmatched(a_ptr: T.handle, B: T.Tensor((16,), "float32")):  # ERROR: T0300
    with T.Kernel(1, threads=16):
        for i in T.Parallel(16):
            B[i] = 1.0


@T.prim_func
def strided(a_ptr: T.handle):
    A = T.match_buffer(a_ptr, (16, 16), "float32", strides=(32, 1))  # ERROR: T0300
    with T.Kernel(1, threads=16):
        A[0, 0] = 1.0


@T.prim_func
def twice(a_ptr: T.handle):
    A = T.match_buffer(a_ptr, (16,), "float32")
    B = T.match_buffer(a_ptr, (16,), "float32")  # ERROR: T0309
    with T.Kernel(1, threads=16):
        A[0] = B[0]


@T.prim_func
def not_a_handle(B: T.Tensor((16,), "float32")):
    A = T.match_buffer(B, (16,), "float32")  # ERROR: T0300
    with T.Kernel(1, threads=16):
        A[0] = 1.0



@T.prim_func
def shape_from_a_variable(a_ptr: T.handle):  # WARNING: W0002
    n = T.int64()
    A = T.match_buffer(a_ptr, (n * 32,), "float32")  # ERROR: T0306
    A[0] = T.float32(0)
