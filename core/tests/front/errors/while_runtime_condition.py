import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def while_runtime_condition(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            i = T.alloc_var("int32", init=0)
            while i < 10:  # ERROR: T0300
                i += 1

    return main
