import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def unsupported_tilelang_api(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float32")
            V = T.reinterpret(S, "int32")  # ERROR: T0300

    return main
