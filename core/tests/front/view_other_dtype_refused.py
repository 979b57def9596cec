# A view of another element type is read and written element by element;
# a tile operation over it (which would move the buffer's own type) and a
# view of another width are refused.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.uint32)):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((64,), T.float32)
        T.copy(A, S)
        U = T.view(S, (64,), T.uint32)
        T.copy(U, B)  # ERROR: T0300
        H = T.view(S, (128,), T.uint16)  # ERROR: T0300
