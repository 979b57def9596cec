# A helper module imported by the tests beside it: a constant, a plain
# function, and a macro that stages code into the kernel that calls it.
import tilelang.language as T

SCALE = 3.0
WIDTH = 32


def halve(n):
    return n // 2


@T.macro
def scale_into(src, dst, n):
    for i in T.Parallel(n):
        dst[i] = src[i] * SCALE
