# `T.Ramp(base, stride, n)` is the vector `base + k * stride` for
# `k < n`; as an index it loads or stores `n` elements. A lane that is not
# known to be non-negative wraps as in TileLang: a negative lane `l`
# indexes `extent + l` (at `t = 0`, `T.Ramp(t - 2, 1, 4)` reads elements
# 14, 15, 0, 1 of a 16-element buffer). Checked against the same elements
# read and written one by one.
# RUN-EQUAL: B = BRef
# RUN-EQUAL: C = CRef
# RUN-EQUAL: D = DRef
import tilelang
import tilelang.language as T


@tilelang.jit
def vector_ramp(N=16):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "float32"),
        B: T.Tensor((4, 4), "float32"),
        BRef: T.Tensor((4, 4), "float32"),
        C: T.Tensor((N,), "float32"),
        CRef: T.Tensor((N,), "float32"),
        D: T.Tensor((8,), "float32"),
        DRef: T.Tensor((8,), "float32"),
    ):
        with T.Kernel(1, threads=1):
            for t in T.serial(4):
                B[t, T.Ramp(0, 1, 4)] = A[T.Ramp(t - 2, 1, 4)]
            for t in T.serial(4):
                for k in T.serial(4):
                    if t - 2 + k < 0:
                        BRef[t, k] = A[N + t - 2 + k]
                    else:
                        BRef[t, k] = A[t - 2 + k]
            for i in T.serial(N):
                C[i] = T.float32(-1)
                CRef[i] = T.float32(-1)
            for t in T.serial(4):
                C[T.Ramp(t - 2, 1, 4)] = B[t, T.Ramp(0, 1, 4)]
            for t in T.serial(4):
                for k in T.serial(4):
                    if t - 2 + k < 0:
                        CRef[N + t - 2 + k] = B[t, k]
                    else:
                        CRef[t - 2 + k] = B[t, k]
            # A stride, a shifted Ramp, and a lane-wise sum of two loads.
            D[T.Ramp(0, 2, 4) + 1] = A[T.Ramp(3, 3, 4)] + A[T.Ramp(0, 1, 4)]
            D[T.Ramp(0, 2, 4)] = T.Broadcast(A[0], 4)
            for k in T.serial(4):
                DRef[2 * k + 1] = A[3 + 3 * k] + A[k]
                DRef[2 * k] = A[0]

    return main
