# `T.device_assert` takes `condition`, `msg` and `no_stack_info`; another
# keyword is an error at the call.
import tilelang
import tilelang.language as T


@tilelang.jit
def device_assert_typo():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            T.device_assert(A[tx] >= 0.0, message="non-negative")  # ERROR: T0102

    return main
