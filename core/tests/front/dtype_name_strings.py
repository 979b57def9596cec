# A dtype is a string in TileLang: its name can be iterated and tested with
# string methods at build time, and a loaded element reports its dtype.
# T.dynamic with commas declares several sizes at once.
# CHECK: symbols(%m, %n)
# RUN-SYMBOL: m=2
# RUN-SYMBOL: n=8
# RUN-EQUAL: B = C
import tilelang
import tilelang.language as T


def storage_bits(dtype):
    return int("".join(c for c in dtype if c.isdigit()))


def storage_kind(dtype):
    return "".join(c for c in dtype if not c.isdigit())


def double_if_int8(v):
    # Chooses at build time from the element's dtype.
    if v.dtype == T.int8:
        return v * 2
    return v


@tilelang.jit
def dtype_name_strings(storage=T.int8):
    m, n = T.dynamic("m, n")
    bits = storage_bits(storage)
    assert bits == 8 and storage_kind(storage) == "int"
    assert not "".isdigit() and "int".isalpha() and "i8".isalnum()

    @T.prim_func
    def main(A: T.Tensor((m, n), storage), B: T.Tensor((m, n), storage), C: T.Tensor((m, n), storage)):
        with T.Kernel(m, threads=32) as bx:
            for j in T.serial(n):
                B[bx, j] = double_if_int8(A[bx, j])
                C[bx, j] = A[bx, j] * (bits // 4)

    return main
