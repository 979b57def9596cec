# Under an `if` on the thread index the lane `T.shuffle_elect` elects is
# the first active one, which depends on the condition: refused.
import tilelang
import tilelang.language as T


@tilelang.jit
def shuffle_elect_guarded():
    @T.prim_func
    def main(A: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            if tx >= 16:
                A[tx] = T.shuffle_elect(32)  # ERROR: T0300

    return main
