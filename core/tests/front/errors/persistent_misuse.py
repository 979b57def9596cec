# T.Persistent binds one loop variable per extent of its domain, and is
# only iterated by a `for`.
import tilelang
import tilelang.language as T


@tilelang.jit
def persistent_misuse(M=64):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(4, threads=32) as b:
            for x in T.Persistent([2, 2], 4, b):  # ERROR: T0309
                A[x] = 0.0
            tiles = T.Persistent([4], 4, b)  # ERROR: T0308
            for x in T.Persistent([], 4, b):  # ERROR: T0309
                A[x] = 0.0

    return main
