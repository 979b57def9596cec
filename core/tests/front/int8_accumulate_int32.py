# CHECK: alloc %acc: var i32[1] = 0
# CHECK: %acc[0] = %acc[0] + cast<i32>(%A[%k]) * cast<i32>(%A[%k])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def int8_accumulate_int32(N=64, dtype="int8"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            acc = T.alloc_var("int32", init=0)
            for k in T.serial(N):
                acc += T.cast(A[k], "int32") * T.cast(A[k], "int32")
            B[0] = acc

    return main
