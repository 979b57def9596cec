import tilelang
import tilelang.language as T


# A name bound to a narrow result holds that type's value, as the variable
# TileLang generates for it does; so does the operand of `T.reinterpret`.
# RUN-EQUAL: Got = Want
@T.prim_func
def narrowed(Got: T.Tensor((3,), "int32"), Want: T.Tensor((3,), "int32")):
    with T.Kernel(1, threads=1):
        a = T.alloc_local((2,), "uint8")
        s = T.alloc_local((1,), "int16")
        a[0] = 200
        a[1] = 100
        s[0] = 300
        total = a[0] + a[1]
        Got[0] = T.cast(total, "int32")
        Got[1] = T.cast(total // 2, "int32")
        Got[2] = T.cast(T.reinterpret(s[0] * 300, "uint16"), "int32")
        Want[0] = 44
        Want[1] = 22
        Want[2] = 24464
