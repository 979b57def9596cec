import tilelang
import tilelang.language as T


# CHECK: copy %Q[%bz +: 1, %by +: 1, %bx * 32 +: 32, 0 +: 16] -> %Qs[0 +: 32, 0 +: 16]
@tilelang.jit(out_idx=[-1])
def attn_load(B=2, H=2, S=64, D=16, dtype="float16"):
    @T.prim_func
    def main(Q: T.Tensor((B, H, S, D), dtype), O: T.Tensor((B, H, S, D), dtype)):
        with T.Kernel(T.ceildiv(S, 32), H, B, threads=128) as (bx, by, bz):
            Qs = T.alloc_shared((32, D), dtype)
            T.copy(Q[bz, by, bx * 32, 0], Qs)
            T.copy(Qs, O[bz, by, bx * 32:(bx + 1) * 32, :])
    return main
