# RUN
# Build-time device queries are answered from the compile target's
# description: sm_90a has compute capability 9.0 and its parts 132 SMs.
# TARGET: sm_90a
# CHECK: f8e4m3[16]
# CHECK: f8e5m2[16]
# CHECK: kernel grid(132)
# CHECK: f32(9.0)
import torch
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver
from tilelang.language.fp8 import determine_fp8_type

SMS = driver.get_num_sms()
MAJOR, MINOR = torch.cuda.get_device_capability(torch.cuda.current_device())
ON_CUDA = torch.cuda.is_available() and torch.version.hip is None
E4M3 = determine_fp8_type()
E5M2 = determine_fp8_type("e5m2")


@tilelang.jit
def persistent(M=1024):
    assert ON_CUDA and MINOR == 0

    @T.prim_func
    def main(
        A: T.Tensor((M,), "float32"),
        Q: T.Tensor((16,), E4M3),
        R: T.Tensor((16,), E5M2),
    ):
        with T.Kernel(SMS, threads=128) as bx:
            A[bx] = MAJOR

    return main
