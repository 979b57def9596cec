# At module level, a name bound in an `except` clause of a `try` whose
# body tilec could not run is unknown: whether Python would have run the
# handler is not known.
import os
import tilelang
import tilelang.language as T

try:
    BLOCK = int(os.environ["BLOCK"])
except KeyError:
    BLOCK = 32


@tilelang.jit
def copy_in_blocks(M=64):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M // BLOCK, threads=32) as bx:  # ERROR: T0108
            for i in T.Parallel(BLOCK):
                B[bx * BLOCK + i] = A[bx * BLOCK + i]

    return main
