import tilelang
import tilelang.language as T


# CHECK: alloc %S: shared f32[2, 32]
@tilelang.jit(out_idx=[-1])
def comp(sizes=(2, 32)):
    shape = [s for s in sizes if s > 0]
    rows, cols = shape
    total = sum(x * 1 for x in shape)
    assert total == 34, f"unexpected total {total}"

    @T.prim_func
    def main(A: T.Tensor(shape, "float32"), B: T.Tensor(shape, "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((rows, cols), "float32")
            T.copy(A, S)
            T.copy(S, B)
    return main
