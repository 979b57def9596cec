"""One element-wise math function applied to a vector, chosen by `op`.

Unary ops compute Y[i] = op(X[i]); the binary `max` and `min` compute
Y[i] = op(X[i], Z[i]) (unary ops leave Z unused, so every variant has the
same signature). The math runs in `dtype` itself; special values (zeros,
infinities, NaN, denormals) come from the runner's inputs, not from here.
"""

import tilelang
import tilelang.language as T


def apply(op, x, z):
    if op == "exp":
        return T.exp(x)
    if op == "exp2":
        return T.exp2(x)
    if op == "log":
        return T.log(x)
    if op == "log2":
        return T.log2(x)
    if op == "sqrt":
        return T.sqrt(x)
    if op == "rsqrt":
        return T.rsqrt(x)
    if op == "sigmoid":
        return T.sigmoid(x)
    if op == "tanh":
        return T.tanh(x)
    if op == "abs":
        return T.abs(x)
    if op == "max":
        return T.max(x, z)
    if op == "min":
        return T.min(x, z)
    raise ValueError("unknown op " + op)


@tilelang.jit(out_idx=[-1])
def elementwise(N=200, block=64, op="exp", dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((N,), dtype),
        Z: T.Tensor((N,), dtype),
        Y: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), dtype)
            z = T.alloc_fragment((block,), dtype)
            y = T.alloc_fragment((block,), dtype)
            T.copy(X[bx * block], x)
            T.copy(Z[bx * block], z)
            for i in T.Parallel(block):
                y[i] = apply(op, x[i], z[i])
            T.copy(y, Y[bx * block])

    return main
