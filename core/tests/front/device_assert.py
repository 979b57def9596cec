# `T.device_assert` checks its condition on every thread (or iteration)
# that reaches it; here every check holds, so the kernel runs to the end
# and copies `A` into `B`. A literal true condition stages nothing. (A
# failing one stops the run: core/tests/lower.rs.)
# RUN-EQUAL: B = A
import tilelang
import tilelang.language as T


@tilelang.jit
def device_assert_kernel(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            tx = T.get_thread_binding()
            T.device_assert(tx == tx)
            T.device_assert(True, "always")
            F = T.alloc_fragment((N,), "float32")
            T.copy(A, F)
            for i in T.Parallel(N):
                if i < N // 2:
                    T.device_assert(F[i] == F[i], msg="no NaN")
                B[i] = F[i]

    return main
