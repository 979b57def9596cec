# Inside `T.Parallel` the compiler picks which thread runs which iteration, so a shuffle there is refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_parallel_refused():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            F = T.alloc_fragment((32,), "float32")
            for i in T.Parallel(32):
                F[i] = T.shfl_xor(A[i], 1)  # ERROR: T0300
            T.copy(F, A)

    return main
