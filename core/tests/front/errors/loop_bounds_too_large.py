import tilelang
import tilelang.language as T


# Loop counters are 32-bit: bounds beyond that are the user's error, at the
# loop (they used to reach the IR verifier, or wrap silently in T.Parallel).
@tilelang.jit
def loop_bounds_too_large(K=2**40, block_K=64):
    n = T.symbolic("n", "int64")

    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):  # ERROR: T0309
                A[0] = A[0] + 1.0
            for k in T.serial(K - 1, K + 3):  # ERROR: T0309
                A[0] = A[0] + 1.0
            for i in T.Parallel(2**32 + 4):  # ERROR: T0309
                A[i % 16] = 1.0
            for k in T.serial(n):  # ERROR: T0309
                A[0] = A[0] + 1.0
            for k in T.serial(T.cast(n, "int32")):
                A[0] = A[0] + 1.0

    return main
