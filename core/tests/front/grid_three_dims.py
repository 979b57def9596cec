import tilelang
import tilelang.language as T


# CHECK: kernel grid(4, 3, 2) threads(64) block(%x, %y, %z)
@T.prim_func
def g3(A: T.Tensor((2, 3, 4), "float32")):
    with T.Kernel(4, 3, 2, threads=64) as (x, y, z):
        A[z, y, x] = 1.0
