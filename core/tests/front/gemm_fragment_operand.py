import tilelang
import tilelang.language as T


# CHECK: gemm %P[0 +: 64, 0 +: 32], %V_shared[0 +: 32, 0 +: 64], %O[0 +: 64, 0 +: 64], policy=full_row, clear=false
@T.prim_func
def pv(P_in: T.Tensor((64, 32), "float16"), V: T.Tensor((32, 64), "float16"), Out: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        P = T.alloc_fragment((64, 32), "float16")
        V_shared = T.alloc_shared((32, 64), "float16")
        O = T.alloc_fragment((64, 64), "float32")
        T.copy(P_in, P)
        T.copy(V, V_shared)
        T.clear(O)
        T.gemm(P, V_shared, O, policy=T.GemmWarpPolicy.FullRow)
        T.copy(O, Out)
