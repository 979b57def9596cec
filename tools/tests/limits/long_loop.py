# A loop of 10^9 iterations in every thread.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def long_loop(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((N,), "float32")
            T.copy(A, acc)
            for k in T.serial(1000000000):
                for i in T.Parallel(N):
                    acc[i] = acc[i] + 1.0
            T.copy(acc, B)
    return main
