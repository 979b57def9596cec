# RUN
# TileLang's short dtype names: `T.float` is float32, `T.int` int32,
# `T.long` int64, `T.short` int16, `T.uint` uint32, `T.double` float64;
# `T.dtype("...")` names a dtype by its string.
# CHECK: func @main(%A: global f32[64], %B: global f32[64])
# CHECK: alloc %n: var i64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def dtype_aliases(N=64, dtype=T.float):
    half = T.dtype("float16")

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), T.float)):
        with T.Kernel(1, threads=64) as bx:
            n = T.alloc_var(T.long, init=3)
            for i in T.Parallel(N):
                k = T.int(i) + T.short(1) + T.uint(0)
                B[i] = T.float(T.double(A[i]) * n) + T.float(half(k))

    return main
