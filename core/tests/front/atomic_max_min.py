# `T.atomic_max` / `T.atomic_min` combine a value into one element from
# every iteration of a parallel loop: the result is the largest (smallest)
# value, which a `T.reduce_max` (`T.reduce_min`) over the same values gives
# too. The region form combines element by element, as `T.max` per element.
# Unsigned destinations compare as unsigned: 0xF0000000 is larger than 7.
# RUN-EQUAL: B = C
# RUN-EQUAL: D = E
# RUN-EQUAL: F = G
# RUN-EQUAL: H = I
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_max_min(N=64):
    @T.prim_func
    def main(
        B: T.Tensor((1,), "int32"),
        C: T.Tensor((1,), "int32"),
        D: T.Tensor((1,), "int32"),
        E: T.Tensor((1,), "int32"),
        F: T.Tensor((8,), "int32"),
        G: T.Tensor((8,), "int32"),
        H: T.Tensor((2,), "uint32"),
        I: T.Tensor((2,), "uint32"),
    ):
        with T.Kernel(1, threads=N):
            vals = T.alloc_fragment((N,), "int32")
            top = T.alloc_fragment((1,), "int32")
            low = T.alloc_fragment((1,), "int32")
            for i in T.Parallel(N):
                vals[i] = (i * 37) % 101 - 50
            T.reduce_max(vals, top, dim=0)
            T.reduce_min(vals, low, dim=0)
            C[0] = top[0]
            E[0] = low[0]
            B[0] = -1000
            D[0] = 1000
            for i in T.Parallel(N):
                T.atomic_max(B[0], (i * 37) % 101 - 50)
                T.atomic_min(D[0], (i * 37) % 101 - 50)
            for j in T.serial(8):
                F[j] = j * 3 - 10
                G[j] = T.max(j * 3 - 10, (j * 37) % 101 - 50)
            T.atomic_max(F[0:8], vals[0:8])
            H[0] = 7
            H[1] = 0xF0000000
            I[0] = 0xF0000000
            I[1] = 7
            for i in T.Parallel(2):
                T.atomic_max(H[0], T.uint32(0xF0000000))
                T.atomic_min(H[1], T.uint32(7))

    return main
