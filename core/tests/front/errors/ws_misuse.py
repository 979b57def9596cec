import tilelang
import tilelang.language as T

@T.prim_func
def bad(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128,), "float32")
        bar = T.alloc_barrier(128)
        with T.ws(0):
            with T.ws(1):  # ERROR: T0308
                T.fill(S, 0)
        with T.ws(2):  # ERROR: T0309
            T.fill(S, 0)
        with T.ws(bx):  # ERROR: T0306
            T.fill(S, 0)
        with T.ws(1):
            inner = T.alloc_barrier(128)  # ERROR: T0308
        T.barrier_arrive(S)  # ERROR: T0309
        T.barrier_wait(bar[0:1], 0)  # ERROR: T0309
        late = T.alloc_barrier(0)  # ERROR: T0309

