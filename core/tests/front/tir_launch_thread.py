# Launch axes bound the TIR way, at the top of the body: the code after the
# bindings is a kernel with those extents.
# CHECK: kernel grid(4, 2) threads(64) block(%bx, %by) thread(%tx)
import tilelang
import tilelang.language as T


@T.prim_func
def scale(A: T.Tensor((2, 256), "float32"), B: T.Tensor((2, 256), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    by = T.launch_thread("blockIdx.y", 2)
    tx = T.launch_thread("threadIdx.x", 64)
    B[by, bx * 64 + tx] = A[by, bx * 64 + tx] * 2.0
