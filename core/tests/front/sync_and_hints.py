# CHECK: copy %A
# CHECK: barrier
# CHECK: copy %S
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def sync_and_hints(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            T.use_swizzle(panel_size=10)
            T.annotate_layout({})
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.sync_threads()
            T.copy(S, B)

    return main
