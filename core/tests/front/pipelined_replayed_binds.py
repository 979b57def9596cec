# Scalar binds at the top of a `T.Pipelined` body whose values read no
# buffer the body writes are replayed: substituted where they are used, so
# the copies start the body (and are pipelined) and the lists count only
# the other statements. Older code that lists the binds too is read
# without their entries, `group` indices counting them or not. A bind that
# reads a buffer the body writes stays, and counts.
# CHECK: pipelined(0, 8, stages=2, order=[0, 1, 2], stage=[0, 0, 1])
# CHECK: copy %A[0 +: 64, %k * 32 +: 32] -> %A_s
# CHECK: copy %B[%k * 32 + 1 - 1 +: 32, 0 +: 64] -> %B_s
# CHECK: pipelined(0, 8, stages=2, order=[1, 2, 3], stage=[0, 0, 1])
# CHECK: copy %A[0 +: 64, %k.1 * 32 +: 32] -> %A_s
# CHECK: pipelined(0, 8, stages=2, order=[1, 2, 3], stage=[0, 0, 1])
# CHECK: copy %A[0 +: 64, %k.2 * 32 +: 32] -> %A_s
# CHECK: pipelined(0, 8, stages=2, order=[0, 1, 2, 3], stage=[0, 0, 1, 1])
# CHECK: let %v
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def replayed_binds(M=64, N=64, K=256, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), dtype)
            B_s = T.alloc_shared((32, 64), dtype)
            acc = T.alloc_fragment((64, 64), "float32")
            T.clear(acc)
            for k in T.Pipelined(8, num_stages=2, stage=[0, 0, 1], order=[0, 1, 2]):
                base: T.int32 = k * 32
                row: T.int32 = base + 1
                T.copy(A[0, base], A_s)
                T.copy(B[row - 1, 0], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Pipelined(8, num_stages=2, stage=[0, 0, 0, 1], order=[0, 1, 2, 3]):
                base: T.int32 = k * 32
                T.copy(A[0, base], A_s)
                T.copy(B[base, 0], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Pipelined(8, num_stages=2, stage=[0, 1], order=[0, 1], group=[[0, 1, 2], [3]]):
                base: T.int32 = k * 32
                T.copy(A[0, base], A_s)
                T.copy(B[base, 0], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Pipelined(8, num_stages=2, stage=[0, 0, 1, 1], order=[0, 1, 2, 3]):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                v: T.float32 = T.Cast("float32", A_s[0, 0])
                acc[0, 0] = acc[0, 0] + v
            T.gemm(A_s, B_s, acc)
            T.copy(acc, C[0, 0])

    return main
