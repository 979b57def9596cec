# Misused IKET markers, hints and paired atomics.
import tilelang
import tilelang.language as T
from tilelang.tools.cuda import iket


@tilelang.jit
def vocab_extra_misuse(M=4, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((M, N), "float32")
            iket.mark("an event name longer than thirty-two bytes")  # ERROR: T0309
            iket.mark("")  # ERROR: T0102
            T.annotate_safe_value({A: S})  # ERROR: T0306
            T.annotate_l2_hit_ratio({S: 0.5})  # ERROR: T0309
            T.annotate_producer_reg_dealloc(0)  # ERROR: T0309
            for i, j in T.Parallel(M, N // 2):
                T.atomic_addx2(B[i, j * 2 : j * 2 + 2], A[i, j * 2])  # ERROR: T0309
            for i in T.Parallel(M):
                T.atomic_addx2(B[i, 0], A[i, 0], return_prev=True)  # ERROR: T0300

    return main
