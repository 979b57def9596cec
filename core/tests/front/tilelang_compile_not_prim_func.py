# KERNEL: build
# `tilelang.compile` compiles a `@T.prim_func`; given a builder function
# (not the prim_func it returns) it is refused at the call.
import tilelang
import tilelang.language as T


def program(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            T.copy(A, B)

    return main


def build(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            T.copy(A, B)

    return tilelang.compile(program, out_idx=[1])  # ERROR: T0103
