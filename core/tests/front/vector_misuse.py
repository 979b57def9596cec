# Vector values (`T.Broadcast`, `T.Ramp`) are taken where tilec stages
# them lane by lane; other uses are errors at the line.
import tilelang
import tilelang.language as T


@tilelang.jit
def vector_misuse(N=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), n: T.int32):
        with T.Kernel(1, threads=1):
            B[0:4] = T.Broadcast(A[0], n)  # ERROR: T0309
            B[0:8] = T.Broadcast(A[0], 4)  # ERROR: T0311
            B[0] = T.Broadcast(A[0], 4)  # ERROR: T0311
            B[T.Ramp(0, 1, 4)] = T.Broadcast(A[0], 8)  # ERROR: T0103
            B[T.Broadcast(1, 4)] = T.Broadcast(A[0], 4)  # ERROR: T0311
            B[0:4] = T.Ramp(0, 1, 4) + T.Ramp(0, 1, 8)  # ERROR: T0103
            B[0:4] = T.Ramp(0.5, 1, 4)  # ERROR: T0309
            B[1] = T.exp(T.Broadcast(A[0], 4))  # ERROR: T0103

    return main
