# RUN-EQUAL: B = A
# `try` has Python's meaning where its body runs: `else` after a body that
# finishes, `finally` always (a `return` in it wins). At module level a
# statement tilec cannot run inside the body (here a call into an
# unmodelled module) is skipped as any module-level statement would be,
# and the imports after it still bind.
# CHECK: kernel grid(2)
import os

try:
    os.environ.pop("SOME_SETTING", None)
    import tilelang
    import tilelang.language as T
finally:
    CLEANED = True


def pick(n):
    order = []
    try:
        order.append("body")
        if n > 64:
            return 128
    except ValueError:
        order.append("handler")
    else:
        order.append("else")
    finally:
        order.append("finally")
    assert order == ["body", "else", "finally"]
    return n


def overridden():
    try:
        return 1
    finally:
        return 2


@tilelang.jit
def copy_in_blocks(M=64):
    block = pick(M) // 2
    assert CLEANED and overridden() == 2 and pick(256) == 128

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M // block, threads=32) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i]

    return main
