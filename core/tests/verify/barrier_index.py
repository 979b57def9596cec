# Roles handing three stage buffers over through barrier arrays of two:
# the third stage's barriers do not exist.
# REPLAY: out-of-bounds
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def handover(K=8):
    @T.prim_func
    def main(A: T.Tensor((K, 128), "float32"), B: T.Tensor((K, 128), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((3, 128), "float32")
            full = T.alloc_barrier([128, 128])
            free = T.alloc_barrier([128, 128])
            for k in T.serial(K):
                s = k % 3
                with T.ws(1):
                    T.barrier_wait(free[s], (k // 3 + 1) % 2)
                    T.copy(A[k, :], S[s, :])
                    T.barrier_arrive(full[s])
                with T.ws(0):
                    T.barrier_wait(full[s], (k // 3) % 2)
                    T.copy(S[s, :], B[k, :])
                    T.barrier_arrive(free[s])

    return main
