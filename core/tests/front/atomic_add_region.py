import tilelang
import tilelang.language as T


# CHECK: atomic_add %C[%by * 32 +: 32, 0 +: 32], %acc[0 +: 32, 0 +: 32]
@T.prim_func
def split(A: T.Tensor((64, 32), "float32"), C: T.Tensor((64, 32), "float32")):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        acc = T.alloc_fragment((32, 32), "float32")
        T.copy(A[by * 32, 0], acc)
        T.atomic_add(C[by * 32, 0], acc)
