# CHECK: alloc %acc: var f32[1] = f32(0.0)
# CHECK: %acc[0] = %acc[0] + %A[%k]
# CHECK: %acc[0] = %acc[0] + f32(1.0)
# CHECK: %B[0] = %acc[0]
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def alloc_var_store(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            acc = T.alloc_var("float32", init=0)
            for k in T.serial(N):
                acc = acc + A[k]
            acc += 1.0
            B[0] = acc

    return main
