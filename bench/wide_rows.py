#!/usr/bin/env python3
"""Wide-row kernels (`bench/kernels/wide_rows.py`) on one GPU: tilec,
TileLang and torch on the same machine, in one run.

    PYTHONPATH=<tilelang site> python3 bench/wide_rows.py --tilec /path/to/tilec [--target sm_90a]

For each workload it first checks tilec's answer on the GPU two ways:
`tilec run --backend cuda --check` against the reference interpreter
(small M), and the dump of a `tilec run` against the closed form in
torch on the same inputs. Then it times tilec (`tilec bench --json`),
TileLang 0.1.x compiling the unchanged file (if importable; CUDA events,
median) and the torch expression (CUDA events, median), and prints
bandwidth (bytes of every parameter once) and the ratios.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = os.path.join(HERE, "kernels", "wide_rows.py")


def layernorm_ref(a):
    return torch.nn.functional.layer_norm(a, a.shape[-1:], eps=1e-5)


def quant_ref(x):
    amax = x.abs().amax(dim=1).clamp_min(1e-8) / 127.0
    q = torch.clamp(torch.round(x / amax[:, None]), -127.0, 127.0).to(torch.int8)
    return q, amax


WORKLOADS = [
    # name, builder, inputs, outputs: M, N per builder call
    ("layernorm", "layernorm", 1, 1),
    ("quant_rows", "quant_rows", 1, 2),
]


def time_cuda(fn, repeat=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def tilec_cmd(args, sub, call, *extra):
    cmd = [args.tilec, sub, FILE, "--kernel", call, "--backend", "cuda"]
    if args.target:
        cmd += ["--target", args.target]
    return cmd + list(extra)


def check_tilec(args, name, call):
    """`--check` on a small M, then the dump against torch."""
    small = call.replace(f"({args.m},", "(64,")
    p = subprocess.run(tilec_cmd(args, "run", small, "--check"), capture_output=True, text=True)
    ok_check = p.returncode == 0
    print(f"  tilec run --check {small}: {'ok' if ok_check else 'FAILED'}")
    if not ok_check:
        print((p.stdout + p.stderr)[-3000:])
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(tilec_cmd(args, "run", call, "--dump", d), capture_output=True, text=True)
        if p.returncode != 0:
            print("  tilec run --dump FAILED\n" + (p.stdout + p.stderr)[-3000:])
            return False
        if name == "layernorm":
            a = torch.from_numpy(np.load(os.path.join(d, "A.npy"))).cuda()
            want = layernorm_ref(a)
            got = torch.from_numpy(np.load(os.path.join(d, "B.npy"))).cuda()
            err = (got - want).abs().max().item()
            ok = err <= 1e-4
            print(f"  dump vs torch layer_norm: max abs err {err:.3g} ({'ok' if ok else 'DIFFERS'})")
        else:
            x = torch.from_numpy(np.load(os.path.join(d, "X.npy"))).cuda()
            q, s = quant_ref(x)
            gq = torch.from_numpy(np.load(os.path.join(d, "Q.npy"))).cuda()
            gs = torch.from_numpy(np.load(os.path.join(d, "S.npy"))).cuda()
            qd = (gq.int() - q.int()).abs().max().item()
            se = ((gs - s).abs() / s).max().item()
            ok = qd <= 1 and se <= 1e-6
            print(f"  dump vs torch: int8 max diff {qd}, scale max rel err {se:.3g} ({'ok' if ok else 'DIFFERS'})")
        return ok and ok_check


def bench_tilec(args, call):
    p = subprocess.run(
        tilec_cmd(args, "bench", call, "--json", "--warmup", "5", "--repeat", "50"),
        capture_output=True,
        text=True,
    )
    try:
        doc = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print("  tilec bench failed:", (p.stdout + p.stderr)[-2000:])
        return None
    return doc.get("median_ms") if doc.get("ok") else None


def load_tilelang():
    try:
        spec = importlib.util.spec_from_file_location("wide_rows_tl", FILE)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except Exception as e:  # noqa: BLE001 - report and go on without TileLang
        print("TileLang not available:", type(e).__name__, e)
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--m", type=int, default=16384)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--block-m", type=int, default=4)
    ap.add_argument("--threads", type=int, default=128)
    args = ap.parse_args()
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    tl = load_tilelang()
    m, n = args.m, args.n
    failed = False
    for name, builder, _, _ in WORKLOADS:
        call = f"{builder}({m}, {n}, block_M={args.block_m}, threads={args.threads})"
        print(f"{name}: {call}")
        failed |= not check_tilec(args, name, call)
        x = torch.randn(m, n, device="cuda")
        nbytes = m * n * 4 + (m * n * 4 if name == "layernorm" else m * n + m * 4)
        t_tilec = bench_tilec(args, call)
        if name == "layernorm":
            t_torch = time_cuda(lambda: layernorm_ref(x))
        else:
            t_torch = time_cuda(lambda: quant_ref(x))
        t_tl = None
        if tl is not None:
            try:
                k = getattr(tl, builder)(m, n, block_M=args.block_m, threads=args.threads)
                out = k(x)
                if name == "layernorm":
                    err = (out - layernorm_ref(x)).abs().max().item()
                    print(f"  TileLang vs torch: max abs err {err:.3g}")
                else:
                    q, s = quant_ref(x)
                    print(f"  TileLang vs torch: int8 max diff {(out[0].int() - q.int()).abs().max().item()}")
                t_tl = time_cuda(lambda: k(x))
            except Exception as e:  # noqa: BLE001
                print("  TileLang failed:", type(e).__name__, str(e)[:500])

        def bw(t):
            return f"{nbytes / t / 1e9:.2f} TB/s ({t * 1e3:.1f} us)" if t else "n/a"

        print(f"  tilec    {bw(t_tilec)}")
        print(f"  TileLang {bw(t_tl)}")
        print(f"  torch    {bw(t_torch)}")
        if t_tilec and t_tl:
            print(f"  tilec / TileLang throughput: {t_tl / t_tilec:.2f}x")
        if t_tilec and t_torch:
            print(f"  tilec / torch throughput: {t_torch / t_tilec:.2f}x")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
