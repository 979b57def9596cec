import tilelang
import tilelang.language as T

# Barriers named by number: `T.create_list_of_mbarrier` gives the kernel
# one list, which `mbarrier=` numbers and `T.get_mbarrier` index. Register
# and fence hints have no effect; `T.sync_threads()` in a role stays a
# `barrier` (of the role's threads).
@T.prim_func
def numbered(A: T.Tensor((4, 128), "float32"), B: T.Tensor((4, 128), "float32")):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((2, 128), "float32")
        T.create_list_of_mbarrier([128] * 4)
        for k in T.serial(4):
            with T.ws(1):
                T.set_max_nreg(40, 0)
                T.mbarrier_wait_parity(mbarrier=k % 2 + 2, parity=(k // 2 + 1) % 2)
                T.copy(A[k, :], S[k % 2, :])
                T.fence_proxy_async()
                T.sync_threads()
                T.mbarrier_arrive(mbarrier=k % 2)
            with T.ws(0):
                T.mbarrier_wait_parity(T.get_mbarrier(k % 2), (k // 2) % 2)
                T.copy(S[k % 2, :], B[k, :])
                T.mbarrier_arrive(T.get_mbarrier(k % 2 + 2))
