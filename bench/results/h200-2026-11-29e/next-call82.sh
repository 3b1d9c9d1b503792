#!/usr/bin/env bash
# Prepared as call 82, not run (the session's device time was spent): n2 = HEAD 99d60d8 + the byte rows of any length read as 16-byte chunks, a lane's six
# chunk loads issued before any is used (46 registers instead of 40; call82-n2-...diff) against
# HEAD (o): the device tests of n2 with the GPU required, memcheck on the odd-width volumes, then
# the MRI alone three rounds alternately and one full run each.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins82.txz
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== n2 test_label_volume_device" >> "$T"; timeout 50 /tmp/b/n2/test_label_volume_device > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -8 >> "$T"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/n2/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m.log 2>&1
echo "memcheck n2 exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in o n2; do echo "== $v" >> "$L"; timeout 20 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown --case mni152 >> "$L" 2>&1; done
done
echo "MRI rounds done after $((SECONDS - start)) s" >> "$S"
for v in o n2; do echo "== $v" >> "$L"; timeout 50 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1; done
echo "done after $((SECONDS - start)) s" >> "$S"
python3 .ab/med.py "$L" "$OUT/medians.json" > "$OUT/medians.txt" 2>&1; cat "$OUT/medians.txt"
cat "$M" "$T" "$S"
