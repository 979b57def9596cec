"""TileLang's own result for kernels where it disagrees with tilec, against the
closed form the kernel computes (torch on the same inputs): the evidence for
the GPU differential's named exceptions (bench/RESULTS.md, 2026-12-07).

    python3 bench/tilelang_exceptions.py TILELANG COMPAT_WORK [TILEC]

TILELANG is a TileLang checkout (its testing/ folder), COMPAT_WORK the
`work/` folder of a `compat.py` run (hoisted copies of test functions);
TileLang, torch and a CUDA device are needed. TILEC (a `tilec` binary)
gives the cases that replay tilec's own inputs (`--seed 5`, as the
differential uses) the inputs of its reference run. One line per case."""
import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np

import tilelang
import torch

TL = sys.argv[1]          # TileLang checkout
WORK = sys.argv[2]        # compat work dir (hoisted test copies)
TILEC = sys.argv[3] if len(sys.argv) > 3 else None


def load(path):
    spec = importlib.util.spec_from_file_location("m%d" % abs(hash(path)), path)
    m = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    spec.loader.exec_module(m)
    return m


def pick(rel):
    w = os.path.join(WORK, rel)
    return w if os.path.exists(w) else os.path.join(TL, rel)


def compiled(rel, expr):
    m = load(pick(rel))
    obj = eval(expr, vars(m))
    return tilelang.compile(obj, target="cuda") if not callable(getattr(obj, "get_kernel_source", None)) else obj


def rel_err(x, y):
    x, y = x.double(), y.double()
    return float((x - y).abs().max() / max(y.abs().max().item(), 1e-30))


def case(name, fn):
    try:
        print("%-44s %s" % (name, fn()), flush=True)
    except Exception as e:  # noqa: BLE001
        print("%-44s error: %s" % (name, repr(e)[:300]), flush=True)


torch.manual_seed(5)
dev = "cuda"


def gfx950_async():
    k = compiled("testing/python/amd/test_tilelang_gfx950_copy_async.py",
                 "_matmul_kernel_async(256, 256, 256, 128, 128, 32, False, True, 'float16', 'float16', 'float32')")
    a = torch.randn(256, 256, device=dev, dtype=torch.float16)
    b = torch.randn(256, 256, device=dev, dtype=torch.float16)
    c = torch.zeros(256, 256, device=dev, dtype=torch.float16)
    k(a, b, c)
    return "TileLang C vs A @ B^T: rel err %.3g" % rel_err(c, (a.float() @ b.float().T))


def webgpu_matmul():
    k = compiled("testing/python/webgpu/test_webgpu_codegen.py", "matmul(1024, 1024, 1024, 16, 16, 16)")
    a = torch.randn(1024, 1024, device=dev, dtype=torch.float16)
    b = torch.randn(1024, 1024, device=dev, dtype=torch.float16)
    c = torch.zeros(1024, 1024, device=dev, dtype=torch.float16)
    k(a, b, c)
    return "TileLang C vs A @ B: rel err %.3g" % rel_err(c, a.float() @ b.float())


def async_no_wait():
    k = compiled("testing/python/language/test_tilelang_language_access_ptr_codegen.py",
                 "test_async_copy_tileop_lowers_to_cp_async()")
    a = torch.randn(4, device=dev, dtype=torch.float16)
    b = torch.full((4,), float("nan"), device=dev, dtype=torch.float16)
    k(a, b)
    return "TileLang B vs A: rel err %.3g (B = %s, A = %s)" % (rel_err(b, a), b.tolist(), a.tolist())


def cp_async_ws():
    k = compiled("testing/python/transform/test_tilelang_transform_producer_consumer_ws.py",
                 "explicit_cp_async_wait_position()")
    A = torch.randn(4, 16, device=dev, dtype=torch.float16)
    B = torch.randn(4, 8, device=dev, dtype=torch.float16)
    Bo = torch.zeros(4, device=dev, dtype=torch.float16)
    Ao = torch.zeros(4, 16, device=dev, dtype=torch.float16)
    k(A, B, Bo, Ao)
    return "TileLang B_out vs B[:, 0]: rel err %.3g; A_out vs A: %.3g" % (rel_err(Bo, B[:, 0]), rel_err(Ao, A))


def shift_promotion():
    k = compiled("testing/python/target/test_tilelang_codegen_cutedsl_integer_shift.py",
                 "test_cutedsl_codegen_promotes_narrow_shift_before_wide_cast()")
    a = torch.tensor([0x1234], device=dev, dtype=torch.uint16)
    b = torch.zeros(1, device=dev, dtype=torch.uint32)
    k(a, b)
    return "TileLang B = %#x for A = 0x1234 (uint16 shift then widen: %#x; widened shift: %#x)" % (
        int(b.item()), (0x1234 << 20) & 0xFFFF, (0x1234 << 20) & 0xFFFFFFFF)


def tilec_inputs(rel, kernel):
    """The inputs tilec's differential run gave a kernel: its reference
    interpreter's run with the same seed, dumped."""
    if TILEC is None:
        raise RuntimeError("needs the TILEC argument")
    out = tempfile.mkdtemp(prefix="tilec-inputs-")
    subprocess.run([TILEC, "run", pick(rel), "--kernel", kernel, "--backend", "ref", "--seed", "5",
                    "--dump", out], check=True, capture_output=True)
    return {n[:-len(".in.npy")]: np.load(os.path.join(out, n)) for n in os.listdir(out) if n.endswith(".in.npy")}


def reduce_epoch_pipelined():
    rel = "testing/python/language/test_tilelang_language_reduce.py"
    name = "test_finalize_reducer_epoch_inside_pipelined_loop"
    a = torch.from_numpy(tilec_inputs(rel, name + "()")["A"]).cuda()
    m = load(pick(rel))
    seen = {}
    randn = m.torch.randn
    m.torch.randn = lambda *shape, **kw: a.clone()
    m.torch.testing.assert_close = lambda got, want, **kw: seen.update(got=got.double().cpu())
    try:
        getattr(m, name)()
    finally:
        m.torch.randn = randn
    return "TileLang B = %s on tilec's inputs; logsumexp(A) = %.6f" % (
        seen["got"].tolist(), torch.logsumexp(a.double(), 0).item())


def tma_desc_over_arrival():
    m = load(pick("testing/python/runtime/test_tilelang_runtime_tma_validation.py"))
    seen = {}
    build = m._compile_tvm_ffi

    def build_and_run(fn, **kw):
        k = build(fn, **kw)
        x = torch.randn(16, 256, device=dev, dtype=torch.float16)
        y = torch.zeros_like(x)
        try:
            k(x, y)
            torch.cuda.synchronize()
            seen["r"] = "ran, max |y - x| = %g" % (y - x).abs().max().item()
        except Exception as e:  # noqa: BLE001
            seen["r"] = "failed: %s" % repr(e)[:200]
        return k

    m._compile_tvm_ffi = build_and_run
    try:
        m.test_tma_host_codegen_aligns_tvm_ffi_stack_alloca_for_descriptor()
    except AssertionError:
        pass
    return "TileLang (barrier of count 1, 32 threads arrive): " + seen.get("r", "not run")


for n, f in [("gfx950 T.async_copy matmul (no wait)", gfx950_async), ("webgpu matmul 1024 (T.grid at block level)", webgpu_matmul),
             ("T.async_copy without wait", async_no_wait), ("ptx_cp_async in T.Pipelined", cp_async_ws),
             ("uint16 << 20 cast to uint32", shift_promotion),
             ("reducer epoch in T.Pipelined (tilec's inputs)", reduce_epoch_pipelined),
             ("tma_copy_2d_desc over-arrival", tma_desc_over_arrival)]:
    case(n, f)
