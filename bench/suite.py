#!/usr/bin/env python3
"""The tilec benchmark suite: tilec against torch (cuBLAS, cuDNN) on one GPU.

Run on a machine with an NVIDIA GPU, torch and a prebuilt tilec:

    python3 bench/suite.py --tilec target/release/tilec [--target sm_90a] [--only gemm]

For every workload it times the tilec kernel with `tilec bench --json`
(CUDA events around each launch, median) and the torch reference in this
same script (CUDA events, median), and prints the ratio tilec / torch in
throughput. Memory-bound workloads are also compared with the copy
bandwidth measured here (a device-to-device copy of 1 GiB, bytes read +
written). Correctness is not measured here: `tilec run --backend cuda
--check` and the conformance suite check it first.

Configurations (tile sizes, stages, threads) are kernel arguments of the
unchanged example files; several can be listed per workload and the best
is reported, each with its figure. The whole suite with every
configuration did not finish in 560 s on an H200; on a time-limited
machine use `--only NAME`, or `--configs 1` (the first configuration of
each workload, listed first because it was the fastest when measured).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

# (name, example file, builder calls to try, flops or None, bytes or None, torch reference)
GEMM_SIZES = [4096, 8192]


def gemm_workloads():
    out = []
    for dtype in ["float16", "bfloat16"]:
        for n in GEMM_SIZES:
            configs = [
                f'matmul({n}, {n}, {n}, block_M=192, block_N=256, block_K=64, dtype="{dtype}", num_stages=4, threads=384)',
                f'matmul({n}, {n}, {n}, block_M=128, block_N=256, block_K=64, dtype="{dtype}", num_stages=4, threads=256)',
                f'matmul({n}, {n}, {n}, block_M=256, block_N=128, block_K=64, dtype="{dtype}", num_stages=4, threads=256)',
            ]
            out.append(
                dict(
                    name=f"gemm_{'fp16' if dtype == 'float16' else 'bf16'}_{n}",
                    file="examples/gemm.py",
                    configs=configs,
                    flops=2.0 * n**3,
                    bytes=None,
                    torch=("gemm", dtype, n),
                )
            )
    return out


def memory_workloads():
    m = n = 8192
    nbytes = 2 * m * n * 2  # fp16 read once and written once
    return [
        dict(
            name="softmax_8192",
            file="examples/softmax.py",
            configs=[f"softmax({m}, {n}, block_M=1)", f"softmax({m}, {n}, block_M=2)"],
            flops=None,
            bytes=nbytes,
            torch=("softmax", "float16", n),
        ),
        dict(
            name="rmsnorm_8192",
            file="examples/rmsnorm.py",
            configs=[f"rmsnorm({m}, {n}, block_M=1)", f"rmsnorm({m}, {n}, block_M=2)"],
            flops=None,
            bytes=nbytes + n * 2,
            torch=("rmsnorm", "float16", n),
        ),
    ]


def attention_workloads():
    b, h, s, d = 4, 32, 4096, 128
    flops = 4.0 * b * h * s * s * d
    out = []
    # Each shape with exact arithmetic, with multiply-adds fused as nvcc
    # does by default (`--fp-contract fast`: what TileLang's kernels get
    # without fast math), then with `--fast-math` (what
    # `pass_configs={"tl.enable_fast_math": True}` asks for: approximate
    # exp2, fused multiply-adds; cuDNN's kernels use the approximations).
    modes = {"": [], "_contract": ["--fp-contract", "fast"], "_fast": ["--fast-math"]}
    for mode, flags in modes.items():
        for causal in (False, True):
            c = "True" if causal else "False"
            out.append(
                dict(
                    name=f"attention_{'causal' if causal else 'noncausal'}{mode}",
                    flags=flags,
                    file="examples/flash_attention.py",
                    configs=[
                        f"flash_attention({b}, {h}, {s}, {d}, is_causal={c}, block_M=128, block_N=128, num_stages=2, threads=256)",
                        f"flash_attention({b}, {h}, {s}, {d}, is_causal={c}, block_M=128, block_N=64, num_stages=2, threads=256)",
                        f"flash_attention({b}, {h}, {s}, {d}, is_causal={c}, block_M=64, block_N=64, num_stages=2, threads=128)",
                    ],
                    flops=flops / 2 if causal else flops,
                    bytes=None,
                    torch=("attention", causal, (b, h, s, d)),
                )
            )
    return out


def run_tilec(tilec, target, workload, config, budget_s, timeout_s):
    """Times one configuration; a first single launch sizes the repeat count."""
    base = [tilec, "bench", workload["file"], "--kernel", config, "--backend", "cuda", "--json"]
    base += workload.get("flags", [])
    if target:
        base += ["--target", target]
    if workload["flops"] is not None:
        base += ["--flops", str(workload["flops"])]

    def once(warmup, repeat):
        try:
            p = subprocess.run(
                base + ["--warmup", str(warmup), "--repeat", str(repeat)],
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout_s} s"
        try:
            doc = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None, (p.stderr or p.stdout).strip()[-2000:]
        if not doc.get("ok"):
            return None, doc.get("error") or p.stderr.strip()[-2000:]
        return doc, None

    probe, err = once(1, 1)
    if probe is None:
        return None, err
    ms = probe["median_ms"] or 1.0
    repeat = int(max(3, min(100, budget_s * 1e3 / max(ms, 1e-3))))
    warmup = max(1, min(10, repeat // 5))
    return once(warmup, repeat)


def torch_time(fn, budget_s):
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    repeat = int(max(3, min(100, budget_s / max(one, 1e-6))))
    for _ in range(max(1, min(10, repeat // 5))):
        fn()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_reference(spec, budget_s):
    import torch

    kind = spec[0]
    torch.manual_seed(0)
    if kind == "gemm":
        _, dtype, n = spec
        dt = getattr(torch, dtype)
        a = torch.randn(n, n, device="cuda", dtype=dt)
        b = torch.randn(n, n, device="cuda", dtype=dt)
        return torch_time(lambda: torch.matmul(a, b), budget_s)
    if kind == "softmax":
        _, dtype, n = spec
        x = torch.randn(n, n, device="cuda", dtype=torch.float16)
        return torch_time(lambda: torch.softmax(x, dim=-1), budget_s)
    if kind == "rmsnorm":
        _, dtype, n = spec
        x = torch.randn(n, n, device="cuda", dtype=torch.float16)
        w = torch.randn(n, device="cuda", dtype=torch.float16)
        return torch_time(lambda: torch.nn.functional.rms_norm(x, (n,), w, eps=1e-6), budget_s)
    if kind == "attention":
        _, causal, (b, h, s, d) = spec
        from torch.nn.attention import SDPBackend, sdpa_kernel

        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))

        def call():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

        return torch_time(call, budget_s)
    raise ValueError(kind)


def copy_bandwidth(budget_s):
    import torch

    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = torch_time(lambda: dst.copy_(src), budget_s)
    return 2 * n / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilec", default="target/release/tilec")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--only", default="", help="run workloads whose name contains this")
    ap.add_argument("--skip", default="", help="skip workloads whose name contains this")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds allowed per tilec bench call")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of timed launches per measurement")
    ap.add_argument("--json", default="", help="also write the results to this file")
    ap.add_argument(
        "--configs",
        type=int,
        default=0,
        help="try at most this many configurations per workload (the first ones; 0: all), "
        "to shorten a run on a time-limited machine",
    )
    args = ap.parse_args()

    import torch

    device = torch.cuda.get_device_name(0)
    copy_gbps = copy_bandwidth(args.budget)
    print(f"device: {device}; torch {torch.__version__}; copy bandwidth {copy_gbps:.0f} GB/s (1 GiB, read + write)")
    results = []
    for w in gemm_workloads() + memory_workloads() + attention_workloads():
        if args.only and args.only not in w["name"]:
            continue
        if args.skip and args.skip in w["name"]:
            continue
        ref_ms = torch_reference(w["torch"], args.budget)
        best = None
        tried = []
        configs = w["configs"][: args.configs] if args.configs > 0 else w["configs"]
        for config in configs:
            doc, err = run_tilec(args.tilec, args.target, w, config, args.budget, args.timeout)
            if doc is None:
                tried.append(dict(config=config, error=err))
                print(f"  {w['name']}: {config}: failed: {err}", file=sys.stderr)
                continue
            tried.append(dict(config=config, median_ms=doc["median_ms"]))
            if best is None or doc["median_ms"] < best["median_ms"]:
                best = dict(config=config, **doc)
        row = dict(name=w["name"], torch_ms=ref_ms, tried=tried)
        if best is not None:
            row["tilec_ms"] = best["median_ms"]
            row["config"] = best["config"]
            row["ratio"] = ref_ms / best["median_ms"]
            if w["flops"] is not None:
                row["tilec_tflops"] = w["flops"] / (best["median_ms"] * 1e-3) / 1e12
                row["torch_tflops"] = w["flops"] / (ref_ms * 1e-3) / 1e12
            if w["bytes"] is not None:
                row["tilec_gbps"] = w["bytes"] / (best["median_ms"] * 1e-3) / 1e9
                row["torch_gbps"] = w["bytes"] / (ref_ms * 1e-3) / 1e9
                row["copy_fraction"] = row["tilec_gbps"] / copy_gbps
            # `tilec bench` rotates inputs and knows the part's published peak.
            row["sets"] = best.get("sets")
            peak = best.get("peak") or {}
            row["peak_fraction"] = peak.get("tflops_fraction") if w["flops"] is not None else peak.get("gbps_fraction")
        results.append(row)
        print(format_row(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=device, torch=torch.__version__, copy_gbps=copy_gbps, results=results), f, indent=1)


def format_row(row):
    if "ratio" not in row:
        return f"{row['name']:<24} torch {row['torch_ms']:.3f} ms; tilec: every configuration failed"
    rate = ""
    if "tilec_tflops" in row:
        rate = f" ({row['tilec_tflops']:.1f} vs {row['torch_tflops']:.1f} TFLOP/s)"
    if "tilec_gbps" in row:
        rate = f" ({row['tilec_gbps']:.0f} vs {row['torch_gbps']:.0f} GB/s; {row['copy_fraction']:.2f}x copy)"
    peak = ""
    if row.get("peak_fraction") is not None:
        peak = f"; {100 * row['peak_fraction']:.1f}% of peak"
    return (
        f"{row['name']:<24} tilec {row['tilec_ms']:.3f} ms, torch {row['torch_ms']:.3f} ms: "
        f"{row['ratio']:.3f}x{rate}{peak}  [{row['config']}]"
    )


if __name__ == "__main__":
    main()
