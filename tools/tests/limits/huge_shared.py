# Three shared buffers of 2^30 elements each: 24 GiB in the reference
# interpreter, which stores every element as 8 bytes.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def huge_shared(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S0 = T.alloc_shared((2**30,), "float32")
            S1 = T.alloc_shared((2**30,), "float32")
            S2 = T.alloc_shared((2**30,), "float32")
            T.copy(A, S0[0:N])
            T.copy(S0[0:N], S1[0:N])
            T.copy(S1[0:N], S2[0:N])
            T.copy(S2[0:N], B)
    return main
