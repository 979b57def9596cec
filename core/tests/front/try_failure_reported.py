# A failure inside a function's `try` is reported as it is: tilec runs no
# `except` handler (a construct it cannot evaluate is no Python exception).
import tilelang
import tilelang.language as T


@tilelang.jit
def guarded(M=64):
    try:
        block = [16, 32][M]  # ERROR: T0110
    except IndexError:
        block = 16

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M // block, threads=32) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i]

    return main
