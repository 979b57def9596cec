# A shuffle under an `if` on the thread index reads lanes that may not reach it.
import tilelang
import tilelang.language as T


@tilelang.jit
def shfl_guarded_refused():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            if tx < 16:
                A[tx] = T.shfl_down(A[tx], 1)  # ERROR: T0300

    return main
