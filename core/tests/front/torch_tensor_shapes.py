# RUN-EQUAL: B = A
# Tensors made at build time size the kernel with torch's meaning: the
# shapes of random tensors (and of their views and arithmetic), and the
# values of tensors torch fixes (`torch.tensor`, `torch.zeros`,
# `torch.arange`).
# CHECK: A: global f16[64, 32]
# CHECK: kernel grid(4)
import torch
import tilelang
import tilelang.language as T

X = torch.randn(64, 32, device="cuda", dtype=torch.float16)
Y = (torch.rand(48, 32, device="cuda", dtype=torch.float16) * 2 - 1).cuda()
M, K = X.shape
N = Y.T.size(1)
ROWS = torch.tensor([3, 5, 2], device="cuda", dtype=torch.int32)
BLOCKS = int(ROWS.max()) - 1
TOTAL = ROWS.sum().item()
EDGE = torch.zeros(N + 1, dtype=torch.int32)[-1].item()
STEPS = torch.arange(0, 8, 2).tolist()
HALF = (torch.ones(2, 2) / 2)[1, 0].item()
WIDE = X.view(-1, 16).shape[0] // M
assert torch.empty(size=(3, M)).shape == (3, 64)
assert (M, N, K) == (64, 48, 32) and X.dtype == torch.float16 and Y.is_cuda
assert (TOTAL, EDGE, STEPS, HALF, WIDE) == (10, 0, [0, 2, 4, 6], 0.5, 2)
assert len(ROWS) == 3 and bool((ROWS > 1).sum() == 3) and X[0].numel() == K


@tilelang.jit
def copy_rows(M=M, K=K, blocks=BLOCKS):
    rows = M // blocks

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((M, K), T.float16)):
        with T.Kernel(blocks, threads=128) as bx:
            T.copy(A[bx * rows : (bx + 1) * rows, :], B[bx * rows : (bx + 1) * rows, :])

    return main
