# A predicated `T.ptx_cp_async` fills the destination with zeros when the
# predicate is false; tilec refuses it and says what to write instead.
import tilelang
import tilelang.language as T


@tilelang.jit
def ptx_cp_async_predicate(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((N,), "float32")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[tx], "w", 1), T.access_ptr(A[tx], "r", 1), 1, predicate=tx < 16)  # ERROR: T0300
            B[tx] = S[tx]

    return main
