import tilelang
import tilelang.language as T


# Arithmetic on 8- and 16-bit integers happens in 32-bit `int`, as the C++
# TileLang generates computes it: the bits a `uint16` shift moves past bit 15
# survive a widening cast, and the sum of two `uint8` does not wrap before
# it is halved. Each `Want` element holds the value C gives.
# RUN-EQUAL: Got = Want
@T.prim_func
def promoted(Got: T.Tensor((4,), "uint32"), Want: T.Tensor((4,), "uint32")):
    with T.Kernel(1, threads=1):
        h = T.alloc_local((1,), "uint16")
        a = T.alloc_local((2,), "uint8")
        s = T.alloc_local((1,), "int8")
        avg = T.alloc_local((1,), "uint8")
        h[0] = 0x1234
        a[0] = 200
        a[1] = 100
        s[0] = -4
        Got[0] = T.cast(h[0] << 20, "uint32")
        avg[0] = (a[0] + a[1]) // 2
        Got[1] = T.cast(avg[0], "uint32")
        Got[2] = T.cast(T.cast(s[0] >> 1, "uint16"), "uint32")
        Got[3] = T.cast(h[0] * h[0] // 0x1000, "uint32")
        Want[0] = 0x23400000
        Want[1] = 150
        Want[2] = 65534
        Want[3] = 0x14B5

