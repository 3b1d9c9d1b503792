#!/usr/bin/env bash
# Call 81: n = HEAD 99d60d8 + the byte rows of any length read as the 16-byte chunks that hold them
# (RowLoads::any_length; call81-n-any-length-rows.diff) against HEAD (o). The tiled MRI (591
# columns) took the value-per-lane ballot reads (46 % of its 6-connected local pass's instructions,
# call 80). Tests of n with the GPU required, memcheck and racecheck on the odd-width volumes, then
# bench_label_volume_gpu: one full run each, then the MRI alone, alternately.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins81.txz
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_volume; do
  echo "== n $t" >> "$T"; timeout 60 /tmp/b/n/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -8 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/n/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m.log 2>&1
echo "memcheck n exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/n/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/r.log 2>&1
echo "racecheck n exit $?" >> "$M"; tail -2 /tmp/r.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for v in o n; do echo "== $v" >> "$L"; timeout 50 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1; done
echo "full runs done after $((SECONDS - start)) s" >> "$S"
for round in 1 2 3; do
  for v in o n; do echo "== $v" >> "$L"; timeout 20 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown --case mni152 >> "$L" 2>&1; done
done
echo "done after $((SECONDS - start)) s" >> "$S"
python3 .ab/med.py "$L" "$OUT/medians.json" > "$OUT/medians.txt" 2>&1; cat "$OUT/medians.txt"
cat "$M" "$T" "$S"
