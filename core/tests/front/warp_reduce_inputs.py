# Warp reductions of input values in several types, in a loop of the
# block's own code and beside per-thread stores: the float sums round
# after every butterfly step, so a backend matches the interpreter only
# when it combines the lanes in TileLang's order.
# RUN
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_reduce_inputs(threads=64, steps=2):
    @T.prim_func
    def main(
        A: T.Tensor((steps, threads), "float32"),
        H: T.Tensor((threads,), "float16"),
        D: T.Tensor((threads,), "float64"),
        I: T.Tensor((threads,), "int64"),
        U: T.Tensor((threads,), "uint32"),
        Out: T.Tensor((steps, 3, threads), "float32"),
        OutH: T.Tensor((threads,), "float16"),
        OutD: T.Tensor((2, threads), "float64"),
        OutI: T.Tensor((2, threads), "int64"),
        OutU: T.Tensor((2, threads), "uint32"),
    ):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            for k in T.serial(steps):
                Out[k, 0, tx] = T.warp_reduce_sum(A[k, tx])
                Out[k, 1, tx] = T.warp_reduce_max(A[k, tx])
                Out[k, 2, tx] = T.warp_reduce_min(A[k, tx] * 3.0)
            OutH[tx] = T.warp_reduce_sum(H[tx])
            OutD[0, tx] = T.warp_reduce_max(D[tx])
            OutD[1, tx] = T.warp_reduce_min(D[tx])
            OutI[0, tx] = T.warp_reduce_sum(I[tx])
            OutI[1, tx] = T.warp_reduce_bitand(I[tx])
            OutU[0, tx] = T.warp_reduce_max(U[tx])
            OutU[1, tx] = T.warp_reduce_bitor(U[tx])

    return main
