import tilelang
import tilelang.language as T

@T.prim_func
def unlisted(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        T.mbarrier_arrive(mbarrier=0)  # ERROR: T0309
        T.create_list_of_mbarrier(128, 128)
        T.create_list_of_mbarrier([128])  # ERROR: T0308
        T.mbarrier_arrive(mbarrier=1)
