import tilelang
import tilelang.language as T

import math
from tilelang.autotuner import autotune

# CHECK: alloc %S: shared f32[32]
# CHECK: %acc[0] = %acc[0] + f32(1.0)
def bump(v):
    v += 1.0


@autotune(configs=[{"block": 32}])
@tilelang.jit(out_idx=[-1])
def sequences(shape=(4, 64, 8), block=64, dtype=T.float32):
    tail = shape[1:]
    assert tail == (64, 8) and shape[::-1][0] == 8 and shape[-2:][0] == 64
    names = ["a", "b", "c"]
    del names[0]
    table = {"x": 1, "y": 2}
    del table["x"]
    assert names == ["b", "c"] and list(table.keys()) == ["y"]
    assert dtype is T.float32 and dtype is not T.float16 and not (dtype is not T.float32)
    assert (2.0).is_integer() and math.gcd(12, 18) == 6 and 0 <= 1 < 2 > 1
    assert block == 32, "the autotune config overrides the default"

    @T.prim_func
    def main(A: T.Tensor((tail[0],), dtype), B: T.Tensor((tail[0],), dtype)):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((block,), dtype)
            acc = T.alloc_var(dtype, init=0)
            bump(acc)
            T.copy(A[0:block], S)
            T.copy(S, B[0:block])
            B[block] = acc
    return main
