#!/usr/bin/env bash
# Everything to run on a machine with an NVIDIA GPU, from a prebuilt tilec
# and CUDA plugin (copy target/release/tilec,
# target/release/libtilec_backend_cuda.so and, when the GPU machine lacks
# it, the libz3.so.4 that tilec links into one folder, DIST):
#
#   bench/device.sh DIST OUT [TARGET] [SUITE ARGS...]
#
# 1. `tilec plugins`: the plugin loads and sees the device;
# 2. every example with `tilec run --backend cuda --check` (against the
#    reference interpreter on the same inputs);
# 3. conformance levels 0-2 on the device for TARGET (default sm_90);
# 4. the benchmark suite against torch (bench/suite.py), when torch is
#    importable.
# Reports land in OUT. Exit status: that of the first failing step.
# The differential against TileLang on TileLang's own kernels is
# bench/tilelang_diff.sh (it needs TileLang and the harness's outputs), or
# bench/tilelang_diff_shards.sh to run it in parallel shards.
set -uo pipefail
dist=${1:?usage: bench/device.sh DIST OUT [TARGET]}
out=${2:?usage: bench/device.sh DIST OUT [TARGET]}
target=${3:-sm_90}
shift $(( $# < 3 ? $# : 3 ))
tilec="$dist/tilec"
export LD_LIBRARY_PATH="$dist${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"
status=0
step() { echo "== $*"; }
keep() { local s=$?; [ $s -ne 0 ] && [ $status -eq 0 ] && status=$s; return 0; }

step "plugins"
"$tilec" plugins; keep
step "examples on the GPU, checked against the reference interpreter ($target)"
for example in examples/*.py; do
    echo "-- $example"
    "$tilec" run "$example" --backend cuda --target "$target" --check; keep
done
step "conformance L0-L2 on the GPU ($target)"
"$tilec" conformance --backend cuda --target "$target" --level 2 -j "$(nproc)" \
    --report "$out/conformance-$target" | tail -n 40; keep
if python3 -c "import torch" 2>/dev/null; then
    step "benchmarks against torch"
    python3 bench/suite.py --tilec "$tilec" --target sm_90a --json "$out/bench.json" "$@"; keep
fi
exit $status
