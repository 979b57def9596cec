# A `uuid.uuid4()` value is random: using it in a kernel is an error.
import uuid
import tilelang
import tilelang.language as T


@tilelang.jit
def random_id_in_kernel(N=32):
    seed = uuid.uuid4().int

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + seed  # ERROR: T0103

    return main
