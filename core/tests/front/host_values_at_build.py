# Build-time values of host code: `argparse.Namespace(k=v)` is an object
# whose attributes are its keywords; `uuid.uuid4()` (here naming a cache
# entry) is a random id that the kernel does not use; `dtype.as_torch()` is
# the torch dtype, which tilec models as the dtype itself.
# KERNEL: host_values_at_build()
# RUN-EQUAL: B = A
import argparse
import uuid
import tilelang
import tilelang.language as T


def host_values_at_build():
    args = argparse.Namespace(n=64, dtype=T.float16)
    cache_key = uuid.uuid4().hex[:8]
    n = args.n
    dtype = args.dtype.as_torch()

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(n):
                B[i] = A[i]

    return main
