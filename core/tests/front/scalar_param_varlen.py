# RUN-SYMBOL: max_len=40
import tilelang
import tilelang.language as T


# A scalar parameter is a run-time value passed at launch: here the longest
# sequence sets the grid, and the per-sequence offsets come from a tensor.
# `out_idx` counts the scalar parameter as TileLang does.
# CHECK: func @main(%X: global f32[64, 8], %starts: global i32[3], %max_len: i32, %Y: global f32[64, 8])
# CHECK: attrs(out_idx=[2])
# CHECK: grid((%max_len + 16 - 1) // 16, 2)
# CHECK: if %bx * 16 + %i < %max_len
@tilelang.jit(out_idx=[3])
def segments(batch=2, block=16):
    @T.prim_func
    def main(
        X: T.Tensor((64, 8), T.float32),
        starts: T.Tensor([batch + 1], T.int32),
        max_len: T.int32,
        Y: T.Tensor((64, 8), T.float32),
    ):
        with T.Kernel(T.ceildiv(max_len, block), batch, threads=32) as (bx, by):
            start = starts[by]
            length = starts[by + 1] - start
            for i in T.serial(block):
                if bx * block + i < max_len:
                    if bx * block + i < length:
                        for j in T.serial(8):
                            Y[start + bx * block + i, j] = X[start + bx * block + i, j] * 2.0
    return main
