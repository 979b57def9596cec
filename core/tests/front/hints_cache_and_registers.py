# Hints that do not change results: the L2 hit ratio of global buffers, the
# register budgets of producer and consumer roles, and a safe value of 0
# (what tilec reads out of bounds anyway).
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def hints_cache_and_registers(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.annotate_l2_hit_ratio({A: 0.9, B: 1})
            T.annotate_safe_value({A: 0})
            T.annotate_producer_reg_dealloc()
            T.annotate_consumer_reg_alloc(reg_count=232)
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.copy(S, B)

    return main
