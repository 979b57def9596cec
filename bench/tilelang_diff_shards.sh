#!/usr/bin/env bash
# The GPU differential against TileLang in NS interleaved shards that run
# side by side (TileLang's compiles are CPU-bound; the kernels are small):
#
#   bench/tilelang_diff_shards.sh HARNESS DIST TILELANG COMPAT OUT NS BUDGET_S [GPU_DIFF ARGS...]
#
# Arguments as for bench/tilelang_diff.sh, plus NS, the number of shards.
# Shard i runs every NS-th kernel of COMPAT/compiled.json from entry i
# (kernels whose parameters hold more than 2^25 elements are left out, as
# gpu_diff.py does by default) with its own TileLang cache,
# $TILELANG_CACHE_DIR<i>, else OUT/tilelang-cache<i> (not a fixed name
# under /tmp, where another user could plant compiled kernels for TileLang
# to load); each resumes where a previous call with the same OUT stopped.
# OUT/all.jsonl holds the merged rows, numbered as in COMPAT/compiled.json,
# and OUT/summary.md their summary.
set -uo pipefail
usage="usage: bench/tilelang_diff_shards.sh HARNESS DIST TILELANG COMPAT OUT NS BUDGET_S [GPU_DIFF ARGS...]"
harness=${1:?$usage}
dist=${2:?$usage}
tilelang=${3:?$usage}
compat=${4:?$usage}
out=${5:?$usage}
ns=${6:?$usage}
budget=${7:?$usage}
shift 7
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
compat=$(cd "$compat" && pwd)
cache_base=${TILELANG_CACHE_DIR:-$(cd "$out" && pwd)/tilelang-cache}
python3 - "$compat" "$out" "$ns" <<'PY'
import json, os, sys
src, out, ns = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(os.path.join(src, "compiled.json")))
ks = d["kernels"]
for i in range(ns):
    sd = os.path.join(out, "list%d" % i)
    os.makedirs(sd, exist_ok=True)
    if os.path.isdir(os.path.join(src, "work")) and not os.path.exists(os.path.join(sd, "work")):
        os.symlink(os.path.join(src, "work"), os.path.join(sd, "work"))
    dd = dict(d)
    dd["kernels"] = [dict(k, shard_index=j) for j, k in enumerate(ks)
                     if j % ns == i and (k.get("elems") or 0) <= 1 << 25]
    json.dump(dd, open(os.path.join(sd, "compiled.json"), "w"))
print("tilelang_diff_shards: %d kernels, %d over 2^25 elements left out, %d shards"
      % (len(ks), sum(1 for k in ks if (k.get("elems") or 0) > 1 << 25), ns))
PY
for i in $(seq 0 $((ns - 1))); do
    TILELANG_CACHE_DIR="$cache_base$i" \
        "$here/tilelang_diff.sh" "$harness" "$dist" "$tilelang" "$out/list$i" "$out/s$i" "$budget" "$@" \
        > "$out/s$i.log" 2>&1 &
done
wait
python3 - "$out" "$ns" <<'PY'
import json, os, sys
out, ns = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(ns):
    lst = json.load(open(os.path.join(out, "list%d" % i, "compiled.json")))["kernels"]
    p = os.path.join(out, "s%d" % i, "merged.jsonl")
    if os.path.exists(p):
        for line in open(p):
            r = json.loads(line)
            r["list_index"] = lst[r["list_index"]]["shard_index"]
            rows.append(r)
rows.sort(key=lambda r: r["list_index"])
with open(os.path.join(out, "all.jsonl"), "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
python3 "$harness/gpu_diff.py" --summarize "$out/all.jsonl" > "$out/summary.md"
sed -n '/^| status | kernels/,/^$/p' "$out/summary.md"
