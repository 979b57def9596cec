# RUN
# RUN-EQUAL: B = A
# `tilelang.compile(prim_func, out_idx=...)` compiles a prim_func with the
# options `tilelang.jit` takes: here B is the output, made by the call.
# CHECK: func @main(%A: global f32[64], %B: global f32[64]) attrs(out_idx=[1])
import tilelang
import tilelang.language as T


def build(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.copy(S, B)

    return tilelang.compile(main, out_idx=[1], target="cuda")
