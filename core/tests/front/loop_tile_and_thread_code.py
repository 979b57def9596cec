# RUN
# RUN-EQUAL: B = A
# A serial loop of the block holding both a tile operation (the parallel
# copy into `S`) and per-thread code that reads the thread index: each
# iteration runs the copy, then every thread's store, as TileLang's
# barriers order them. Each thread reads the element its neighbour's
# part of the copy wrote, so the order matters.
import tilelang
import tilelang.language as T


@tilelang.jit
def loop_tile_and_thread_code(rows=4, cols=128):
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "float32"), B: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=cols):
            S = T.alloc_shared((cols,), "float32")
            tx = T.get_thread_binding()
            for r in T.serial(rows):
                for j in T.Parallel(cols):
                    S[j] = A[r, j]
                nb = (tx + 1) % cols
                B[r, nb] = S[nb]

    return main
