# `T.ptx_cp_async` between buffers of different dtypes reinterprets the
# bytes, which tilec refuses at the copy.
import tilelang
import tilelang.language as T


@tilelang.jit
def ptx_cp_async_dtype_mismatch(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "int16")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((N,), "int16")
            T.ptx_cp_async(T.access_ptr(S[0], "w", 8), T.access_ptr(A[0], "r", 8), 8)  # ERROR: T0300
            B[0] = S[0]

    return main
