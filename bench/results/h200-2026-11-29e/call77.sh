#!/usr/bin/env bash
# Call 77: the Python package built on the device (CUDA, sm_90) and its whole pytest suite with
# the GPU required, after 6465a6a (swapped / broadcast volumes copied once by label and
# marching_cubes, host and device).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
start=$SECONDS
nvidia-smi -L > "$OUT/summary.txt" 2>&1
CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90" JOBS=16 timeout 570 scripts/python-test.sh /tmp/pyb --offline > "$OUT/python.log" 2>&1
echo "exit $? after $((SECONDS - start)) s" >> "$OUT/summary.txt"
grep -E "passed|failed|FAILED|Error" "$OUT/python.log" | tail -30
cat "$OUT/summary.txt"
