# IKET profiling events (tilelang.tools.cuda.iket) trace a kernel's
# progress without changing what it computes: tilec accepts them, warns that
# it records none, and stages the kernel without them. `with` may open the
# kernel and an IKET range together.
# CHECK-NOT: iket
# RUN-EQUAL: C = D
import tilelang
import tilelang.language as T
from tilelang.tools.cuda import iket


@tilelang.jit
def iket_markers_ignored(n=256, threads=64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32"), D: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("block"):  # WARNING: W0001
            iket.mark("enter", payload=iket.payload(bx, dtype="int32"))  # WARNING: W0001
            iket.range_push("body")  # WARNING: W0001
            for i in T.Parallel(threads):
                C[bx * threads + i] = A[bx * threads + i] + B[bx * threads + i]
            iket.range_pop("body")  # WARNING: W0001
            with iket.range("second"):  # WARNING: W0001
                for i in T.Parallel(threads):
                    D[bx * threads + i] = B[bx * threads + i] + A[bx * threads + i]

    return main
