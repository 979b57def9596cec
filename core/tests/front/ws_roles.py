import tilelang
import tilelang.language as T

# Roles and phased barriers in every spelling TileLang accepts: one
# barrier or an array, `barrier_*` and `mbarrier_*` names, keywords, a
# role of two warp groups (listed out of order), and a wait outside roles.
@T.prim_func
def roles(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=384) as bx:
        S = T.alloc_shared((128,), "float32")
        one = T.alloc_barrier(256)
        two = T.alloc_barrier([128, 256])
        for i in T.serial(2):
            with T.ws(2):
                T.mbarrier_wait_parity(mbarrier=two[1], parity=(i + 1) % 2)
                T.copy(A, S)
                T.barrier_arrive(one)
            with T.ws(1, 0):
                T.barrier_wait(one, i % 2)
                T.copy(S, B)
                T.mbarrier_arrive(mbarrier=two[1])
        T.barrier_wait(two[1], 1)
