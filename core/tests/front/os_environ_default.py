# os.environ.get returns its default: tilec reads no environment, so a
# build does not depend on the shell it runs in.
# CHECK: func @main(%A: global f32[64], %B: global f32[64])
# RUN-EQUAL: B = A
import os

import tilelang
import tilelang.language as T

N = int(os.environ.get("TILEC_TEST_N", "64"))
assert os.environ.get("HOME") is None


@tilelang.jit
def os_environ_default():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            T.copy(A, B)

    return main
