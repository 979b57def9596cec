import tilelang.language as T
from tvm import tirx


# An external device function other than `__nanosleep` has nothing to call
# in tilec's output: refused at the call.
@T.prim_func
def calls_extern(A: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=32):
        A[0] = tirx.call_extern("float32", "my_device_fn", A[0])  # ERROR: T0300
