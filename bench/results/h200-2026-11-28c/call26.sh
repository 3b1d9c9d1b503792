#!/usr/bin/env bash
# Device call 26 (one GPU): the committed tree (run forest for binary volumes): volume-label tests
# with the GPU required, memcheck and racecheck, the label benchmark and cupyx in the same run.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
{ nvidia-smi -L; git log --oneline -1 2>/dev/null; } > "$S" 2>&1
cmake -S . -B /tmp/b26 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF > /tmp/b.log 2>&1
cmake --build /tmp/b26 -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume test_cli_label_volume test_label >> /tmp/b.log 2>&1
echo "build exit $? after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/b.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume" "test_label --gtest_filter=*Cuda*:*CUDA*:*Device*:*Gpu*:*Band*"; do
  echo "== $t" >> "$T"
  timeout 120 /tmp/b26/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
timeout 80 /tmp/b26/bench/bench_label_volume_gpu --reps 10 --breakdown > "$OUT/label.log" 2>&1
echo "bench exit $? after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b26/tests/test_label_volume_device --gtest_filter='*NearPercolation*:*EveryConnectivity*:*StatsCapacity*:*OneVoxel*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b26/tests/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
grep -E "^(random|mni)|phases" "$OUT/label.log"
grep -v "^\s*$" "$OUT/peers.log" | tail -16
cat "$M" "$T" "$S"
