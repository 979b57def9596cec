#!/usr/bin/env python3
"""Differential mutation testing of tilec through its command line.

Takes the kernel files of `examples/` and `conformance/corpus/`, changes
one to three things in each copy that keep it a plausible TileLang kernel
(a buffer's scope, a dtype, a stage or thread count, a tile or problem
size, a warp policy, a transpose or causal flag, `T.Pipelined` against
`T.serial`, a `T.Layout` map for a shared buffer), and runs it with

    tilec run FILE --backend sim --target T --check

on a random built-in target. The SIMT interpreter runs the lowered code
thread by thread against the reference interpreter on the same inputs, so
a mutated kernel must either be refused with a diagnostic (exit 1) or
match. A failure is any of: another exit status, a panic, a message that
calls itself a tilec bug or an internal error, a `--check` mismatch, or a
race or other hazard the interpreter reports. Failing inputs are kept in
the output folder with the command that failed.

    python3 fuzz/mutate_examples.py --tilec target/release/tilec --cases 200 --seed 1

`--layouts` also pins a shared buffer of every case to a random
`T.Layout` map (transposed, reversed or rotated rows, swapped pairs, an
odd pitch, interleaved rows), which the lowering must follow.

With `--compile-only` the files are mutated more freely (lines dropped or
duplicated, numbers and names swapped) and only compiled and verified:
then any exit status but 0 and 1, a panic or an internal error is a
failure. Exit status: 1 when a failure was found, else 0.
"""

import argparse
import collections
import glob
import os
import random
import re
import subprocess
import sys

TARGETS = ["sm_80", "sm_90a", "gfx942", "apple"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel_files():
    files = glob.glob(os.path.join(ROOT, "examples", "*.py"))
    files += glob.glob(os.path.join(ROOT, "conformance", "corpus", "*.py"))
    return sorted(files)


def pick(rng, matches):
    matches = list(matches)
    return rng.choice(matches) if matches else None


def replace(src, m, text):
    return src[: m.start()] + text + src[m.end() :]


# `T.Layout` maps for a shared buffer of R rows and C columns (or of R
# elements): transposed, reversed rows, rotated rows, pairs swapped,
# padded by an odd pitch, blocks of four rows interleaved.
MAPS_2D = [
    "lambda i, j: j * ({R}) + i",
    "lambda i, j: i * ({C}) + ({C}) - 1 - j",
    "lambda i, j: i * ({C}) + (j + i) % ({C})",
    "lambda i, j: i * ({C}) + (j ^ (i % 2))",
    "lambda i, j: i * (({C}) + 3) + j",
    "lambda i, j: i // 4 * 4 * ({C}) + j * 4 + i % 4",
]
MAPS_1D = ["lambda i: ({R}) - 1 - i", "lambda i: i * 2"]


def layout_mutation(rng, src):
    """Pins a shared buffer to a random `T.Layout` map, right after its
    allocation."""
    allocs = list(
        re.finditer(r"^( *)(\w+) = T\.alloc_shared\(\(([^(),]+)(?:, ([^(),]+))?,?\)", src, re.M)
    )
    # A shape held in a variable: taken as two-dimensional.
    named = list(re.finditer(r"^( *)(\w+) = T\.alloc_shared\(([A-Za-z_]\w*),", src, re.M))
    m = pick(rng, allocs + named)
    if m is None:
        return src
    if m in named:
        indent, name, var = m.group(1), m.group(2), m.group(3)
        rows, cols = var + "[0]", var + "[1]"
    else:
        indent, name, rows, cols = m.group(1), m.group(2), m.group(3).strip(), m.group(4)
    if cols is None:
        fn = rng.choice(MAPS_1D).format(R=rows)
        shape = "(%s,)" % rows
    else:
        fn = rng.choice(MAPS_2D).format(R=rows, C=cols.strip())
        shape = "(%s, %s)" % (rows, cols.strip())
    end = src.index("\n", m.end()) + 1
    line = "%sT.annotate_layout({%s: T.Layout(%s, %s)})\n" % (indent, name, shape, fn)
    return src[:end] + line + src[end:]


def semantic_mutation(rng, src):
    """One change that keeps the file a plausible kernel."""
    kind = rng.randrange(8)
    if kind == 7:
        return layout_mutation(rng, src)
    if kind == 0:
        m = pick(rng, re.finditer(r"T\.alloc_(shared|fragment)", src))
        if m:
            other = "fragment" if m.group(1) == "shared" else "shared"
            return replace(src, m, "T.alloc_" + other)
    elif kind == 1:
        m = pick(rng, re.finditer(r'"(float16|bfloat16|float32)"', src))
        if m:
            return replace(src, m, '"%s"' % rng.choice(["float16", "bfloat16", "float32"]))
    elif kind == 2:
        m = pick(rng, re.finditer(r"\b(num_stages|threads)=(\d+)", src))
        if m:
            values = ["0", "1", "2", "3", "4"] if m.group(1) == "num_stages" else ["32", "64", "96", "128", "256", "384"]
            return replace(src, m, "%s=%s" % (m.group(1), rng.choice(values)))
    elif kind == 3:
        m = pick(rng, re.finditer(r"\b(block_[MNK]|M|N|K|seq_len|split_k)=(\d+)", src))
        if m:
            values = ["1", "8", "16", "24", "32", "48", "64", "100", "128", "200", "256"]
            return replace(src, m, "%s=%s" % (m.group(1), rng.choice(values)))
    elif kind == 4:
        if "T.Pipelined(" in src and rng.random() < 0.5:
            return re.sub(r"T\.Pipelined\(([^,()]+), num_stages=[^)]*\)", r"T.serial(\1)", src, count=1)
        return src.replace("T.serial(", "T.Pipelined(", 1)
    elif kind == 5:
        m = pick(rng, re.finditer(r"GemmWarpPolicy\.(Square|FullRow|FullCol)", src))
        if m:
            return replace(src, m, "GemmWarpPolicy." + rng.choice(["Square", "FullRow", "FullCol"]))
    else:
        m = pick(rng, re.finditer(r"\b(trans_A|trans_B|is_causal)=(True|False)", src))
        if m:
            return replace(src, m, "%s=%s" % (m.group(1), rng.choice(["True", "False"])))
    return src


def free_mutation(rng, src):
    """One change that may well break the file."""
    kind = rng.randrange(5)
    lines = src.split("\n")
    if kind == 0:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == 1:
        lines.insert(rng.randrange(len(lines)), rng.choice(lines))
        return "\n".join(lines)
    if kind == 2:
        m = pick(rng, re.finditer(r"\b\d+\b", src))
        if m:
            return replace(src, m, rng.choice(["0", "-1", "1", "7", "65536", "2**31", "2**40", "0.5"]))
    if kind == 3:
        names = list(re.finditer(r"\b[A-Za-z_]\w*\b", src))
        if names:
            return replace(src, rng.choice(names), rng.choice(names).group(0))
    m = pick(rng, re.finditer(r"[+\-*/]", src))
    if m:
        return replace(src, m, rng.choice(["+", "-", "*", "//", "%"]))
    return src


def failure(proc, check):
    """Why a finished run counts as a failure, or None."""
    out = proc.stdout + proc.stderr
    if proc.returncode not in (0, 1):
        return "exit status %d" % proc.returncode
    for needle in ("panicked", "bug in tilec", "internal error"):
        if needle in out:
            return needle
    if check and proc.returncode == 1 and "failed under the SIMT interpreter" in out:
        return "SIMT interpreter hazard"
    if check and re.search(r"\bFAIL\b|mismatch|: [1-9]\d* of \d+ elements differ", out):
        return "--check mismatch"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilec", default=os.path.join(ROOT, "target", "release", "tilec"))
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per tilec call")
    ap.add_argument("--out", default="target/mutations", help="where failing inputs are kept")
    ap.add_argument("--compile-only", action="store_true", help="free mutations, compile and verify only")
    ap.add_argument("--layouts", action="store_true", help="every case also pins a shared buffer to a T.Layout map")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    files = kernel_files()
    counts = collections.Counter()
    case_path = os.path.join(args.out, "case.py")
    for n in range(args.cases):
        origin = rng.choice(files)
        with open(origin) as f:
            src = f.read()
        mutate = free_mutation if args.compile_only else semantic_mutation
        for _ in range(rng.randint(1, 3)):
            src = mutate(rng, src)
        if args.layouts:
            src = layout_mutation(rng, src)
        with open(case_path, "w") as f:
            f.write(src)
        target = rng.choice(TARGETS)
        if args.compile_only:
            sub = rng.choice(["compile", "verify"])
            cmd = [args.tilec, sub, case_path, "--target", target, "--color", "never"]
            if sub == "compile":
                cmd += ["--backend", "sim"]
        else:
            cmd = [args.tilec, "run", case_path, "--backend", "sim", "--target", target, "--check", "--color", "never"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            why = failure(proc, not args.compile_only)
            tail = (proc.stdout + proc.stderr)[-1500:]
        except subprocess.TimeoutExpired:
            why, tail = "timed out after %g s" % args.timeout, ""
        if why is None:
            counts["refused" if proc.returncode == 1 else "passed"] += 1
            continue
        counts["failed"] += 1
        kept = os.path.join(args.out, "failure_%d_%d.py" % (args.seed, n))
        with open(kept, "w") as f:
            f.write(src)
        cmd[cmd.index(case_path)] = kept
        print("FAILED (%s), from %s:\n  %s\n%s\n" % (why, os.path.relpath(origin, ROOT), " ".join(cmd), tail), flush=True)
    print("%d cases: %s" % (args.cases, ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
