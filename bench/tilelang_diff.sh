#!/usr/bin/env bash
# The GPU differential against TileLang, for a machine with an NVIDIA GPU,
# torch and TileLang: every kernel of TileLang's own repository that the
# compatibility harness compiled is run by tilec (`--backend cuda`) and by
# TileLang on the same inputs, and every parameter the kernel writes is
# compared (gpu_diff.py of the harness in shared/tilelang-compat).
#
#   bench/tilelang_diff.sh HARNESS DIST TILELANG COMPAT OUT [BUDGET_S] [GPU_DIFF ARGS...]
#
# HARNESS   the folder holding gpu_diff.py (shared/tilelang-compat)
# DIST      tilec and libtilec_backend_cuda.so (and libz3.so.4 when the
#           machine lacks it), as for bench/device.sh
# TILELANG  a TileLang checkout (its examples/ and testing/ at least)
# COMPAT    the output folder of `compat.py` (compiled.json and work/)
# OUT       where the per-chunk .jsonl and summaries go; OUT/summary.md
#           is the merged summary
# BUDGET_S  seconds to spend in all (default 1500)
#
# TileLang must be importable (PYTHONPATH). A kernel of TileLang's own can
# lose the CUDA context; gpu_diff then marks the rest "skipped" with the
# entry to resume from, and this script starts a new chunk there, until the
# list or the budget is done. Exit status: 0 when the run completed, 1 when
# the budget ran out first, 2 on a usage error.
set -uo pipefail
usage="usage: bench/tilelang_diff.sh HARNESS DIST TILELANG COMPAT OUT [BUDGET_S] [GPU_DIFF ARGS...]"
harness=${1:?$usage}
dist=${2:?$usage}
tilelang=${3:?$usage}
compat=${4:?$usage}
out=${5:?$usage}
budget=${6:-1500}
shift $(( $# < 6 ? $# : 6 ))
for need in "$harness/gpu_diff.py" "$dist/tilec" "$dist/libtilec_backend_cuda.so" "$compat/compiled.json"; do
    if [ ! -e "$need" ]; then
        echo "tilelang_diff: $need not found" >&2
        echo "$usage" >&2
        exit 2
    fi
done
export LD_LIBRARY_PATH="$dist${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
mkdir -p "$out"
deadline=$(( $(date +%s) + budget ))
# Resume: gpu_diff writes one row per entry of a chunk, in order, so the
# latest chunk's first skipped row (or its end) is where a previous run in
# OUT stopped; --start counts entries after gpu_diff's filtering, as here.
start=$(python3 - "$out" <<'PY'
import glob, json, os, sys
chunks = {int(p.rsplit(".", 2)[-2]): p for p in glob.glob(os.path.join(sys.argv[1], "gpu_diff.*.jsonl"))}
if not chunks:
    print(0)
else:
    first = max(chunks)
    rows = [json.loads(l) for l in open(chunks[first]) if l.strip()]
    # Only entries that did not run: a kernel that writes nothing is also
    # "skipped", but it ran.
    skipped = [i for i, r in enumerate(rows)
               if r.get("skipped") == "time budget" or "rerun with --start" in r.get("skipped", "")]
    print(first + (skipped[0] if skipped else len(rows)))
PY
)
status=0
while :; do
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -le 30 ]; then
        echo "tilelang_diff: budget spent before entry $start" >&2
        status=1
        break
    fi
    echo "== gpu_diff from entry $start ($left s left)"
    python3 "$harness/gpu_diff.py" --tilec "$dist/tilec" --plugin "$dist/libtilec_backend_cuda.so" \
        --tilelang-root "$tilelang" --list "$compat/compiled.json" --out "$out" \
        --start "$start" --budget-s "$left" "$@" > "$out/gpu_diff.$start.log" 2>&1
    rc=$?
    grep -v '^\[' "$out/gpu_diff.$start.log" | tail -n 5
    # Where to go on: the first entry skipped for a lost context names it.
    # A process that died without its summary (TileLang runs in-process: a
    # kernel library with an unresolved symbol ends the interpreter) wrote
    # rows up to the entry it died in; that entry is recorded as TileLang's
    # failure with the last lines of the log, and the run goes on after it.
    next=$(python3 - "$out/gpu_diff.$start.jsonl" "$compat/compiled.json" "$start" "$rc" "$out/gpu_diff.$start.log" <<'PY'
import json, os, re, sys
path, listing, start, rc, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rows = [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []
for r in rows:
    m = re.search(r"rerun with --start (\d+)", r.get("skipped", ""))
    if m:
        print(m.group(1))
        break
else:
    if any(r.get("skipped") == "time budget" for r in rows):
        print("budget")
    elif rc != 0 and not any(r.get("skipped") for r in rows[-1:]):
        entries = json.load(open(listing))["kernels"]
        died = start + len(rows)
        if died < len(entries):
            e = entries[died]
            tail = [l.strip() for l in open(log, errors="replace") if l.strip() and not l.startswith("[")][-3:]
            with open(path, "a") as f:
                f.write(json.dumps({"list_index": died, "file": e["file"], "builder": e.get("builder"),
                                    "kernel": e["kernel"], "status": "TileLang failed", "tl_stage": "process",
                                    "tl_error": "the process died (exit %d): %s" % (rc, " / ".join(tail)[:300])}) + "\n")
            print(died + 1)
        else:
            print("done")
    else:
        print("done")
PY
)
    case "$next" in
        done) break ;;
        budget) status=1; break ;;
        *)
            if [ "$next" -le "$start" ]; then
                # The entry that lost the context is the first of the chunk:
                # step over it rather than loop.
                next=$(( start + 1 ))
            fi
            start=$next
            ;;
    esac
done
# Merge the chunks: an entry that ran beats one that did not (time budget,
# lost context); among rows alike, the latest chunk's wins. Chunks are files
# gpu_diff.<start>.jsonl, later runs having larger starts for the same entry.
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def ran(r):
    why = r.get("skipped", "")
    return not (why == "time budget" or "rerun with --start" in why)
best = {}
for path in sorted(glob.glob(os.path.join(out, "gpu_diff.*.jsonl")),
                   key=lambda p: int(p.rsplit(".", 2)[-2])):
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            k = r["list_index"]
            if k not in best or ran(r) or not ran(best[k]):
                best[k] = r
with open(os.path.join(out, "merged.jsonl"), "w") as f:
    for k in sorted(best):
        f.write(json.dumps(best[k]) + "\n")
PY
python3 "$harness/gpu_diff.py" --summarize "$out/merged.jsonl" > "$out/summary.md"
head -n 40 "$out/summary.md"
exit $status
