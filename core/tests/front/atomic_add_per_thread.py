# An element added to an element by `T.atomic_add` is a thread-level
# atomic: at block level every thread of the kernel adds once, as TileLang
# runs it. B must equal C, whose loop over the thread count spells that out;
# under `if tx == 0` a single thread adds 1, so D equals E's single store.
# RUN-EQUAL: B = C
# RUN-EQUAL: D = E
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_add_per_thread(N=8, threads=64):
    @T.prim_func
    def main(
        A: T.Tensor((N,), "int32"),
        B: T.Tensor((1,), "int32"),
        C: T.Tensor((1,), "int32"),
        D: T.Tensor((1,), "int32"),
        E: T.Tensor((1,), "int32"),
    ):
        with T.Kernel(1, threads=threads):
            B[0] = 0
            C[0] = 0
            D[0] = 0
            E[0] = 1
            for i in T.serial(N):
                T.atomic_add(B[0], A[i])
                for t in T.Parallel(threads):
                    T.atomic_add(C[0], A[i])
            tx = T.get_thread_binding(0)
            if tx == 0:
                T.atomic_add(D[0], 1)

    return main
