# `T.__ldg(x[i])` is the load; `T.tvm_storage_sync("shared")` the block
# barrier; `T.any_of` / `T.all_of` the `or` / `and` of a region's elements;
# `T.decl_buffer` with a scope an allocation there.
# CHECK: barrier
# CHECK: || %S[2] != 0
# CHECK: && %M[%bx, 1] != 0
import tilelang
import tilelang.language as T


@T.prim_func
def flags(X: T.Tensor((128,), "float32"), M: T.Tensor((2, 2), "int32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(2, threads=64) as bx:
        S = T.decl_buffer((3,), "int32", scope="shared.dyn")
        tx = T.get_thread_binding()
        if tx < 3:
            S[tx] = M[bx, 0]
        T.tvm_storage_sync("shared")
        if T.any_of(S) and T.all_of(M[bx, :]):
            Y[bx * 64 + tx] = T.__ldg(X[bx * 64 + tx]) + 1.0
