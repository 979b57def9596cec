# A vector bound to a name is computed there: a later store into what it
# read does not change it.
# RUN-EQUAL: X = XRef
import tilelang
import tilelang.language as T


@tilelang.jit
def vector_named():
    @T.prim_func
    def main(X: T.Tensor((8,), "float32"), XRef: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1):
            XRef[0] = X[0]
            XRef[1] = X[1]
            v = T.Broadcast(X[0], 4) + T.Broadcast(X[1], 4)
            X[0] = T.float32(100)
            X[4:8] = v
            X[0] = XRef[0]
            for i in T.serial(4):
                XRef[i] = X[i]
                XRef[4 + i] = XRef[0] + XRef[1]

    return main
