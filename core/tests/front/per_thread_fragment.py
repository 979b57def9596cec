import tilelang
import tilelang.language as T


# A fragment that only per-thread scalar code touches (never a `T.Parallel`
# nest or a tile operation) is each thread's own array in TileLang, as a
# `T.alloc_local` is: here the threads of the upper half keep a small
# table of indices under their guard, each filled from its own thread
# index, and gather through it. The same gather written with a parallel
# nest must agree exactly.
# RUN-EQUAL: B = C
@T.prim_func
def gather(A: T.Tensor((256,), "int32"), Idx: T.Tensor((64, 4), "int32"), B: T.Tensor((64, 4), "int32"), C: T.Tensor((64, 4), "int32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        if tx >= 64:
            table = T.alloc_fragment([2, 4], "int32")
            for r in T.unroll(4):
                table[0, r] = Idx[tx - 64, r] % 256
                table[1, r] = A[table[0, r]]
            for r in T.unroll(4):
                B[tx - 64, r] = table[1, r]
        for i, r in T.Parallel(64, 4):
            C[i, r] = A[Idx[i, r] % 256]
