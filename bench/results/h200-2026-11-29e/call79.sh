#!/usr/bin/env bash
# Call 79: the Python package built on the device (CUDA, sm_90) at 2ac1315, its pytest suite with
# the GPU required, and a sweep of device inputs (every dtype, layouts, tiny and empty arrays; each
# function's CuPy / PyTorch result against its NumPy result: device_sweep.py here, run as .ab/device_sweep.py).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
start=$SECONDS
nvidia-smi -L > "$OUT/summary.txt" 2>&1
CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90" JOBS=16 timeout 420 scripts/python-test.sh /tmp/pyb --offline > "$OUT/python.log" 2>&1
echo "pytest exit $? after $((SECONDS - start)) s" >> "$OUT/summary.txt"
timeout 120 /tmp/pyb/python-venv/bin/python device_sweep.py here, run as .ab/device_sweep.py > "$OUT/sweep.log" 2>&1
echo "sweep exit $? after $((SECONDS - start)) s" >> "$OUT/summary.txt"
grep -E "passed|failed|FAILED" "$OUT/python.log" | tail -20
tail -40 "$OUT/sweep.log"
cat "$OUT/summary.txt"
