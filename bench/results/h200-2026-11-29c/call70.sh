#!/usr/bin/env bash
# Call 70: binaries built on the development machine (nvcc 13.0, sm_90, Release). o = HEAD a038900;
# r7 = o + the statistics in passes taking a root run's label from its number (the word's offset
# and root bits) instead of reading it back from the label volume, held to 7 blocks an SM (70
# registers); r = the same without the launch bound (79 registers, 6 blocks). Tests of r7 with the
# GPU required, memcheck/racecheck, then the volume benchmark alternated.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins70.txz
for f in /tmp/b/*/*; do ldd "$f" | grep -q "not found" && echo "missing libraries: $f" >> "$S"; done
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_volume test_label_statistics; do
  echo "== r7 $t" >> "$T"; timeout 90 /tmp/b/r7/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -8 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/r7/test_label_volume_device --gtest_filter='*Stats*' > /tmp/m.log 2>&1
echo "memcheck r7 exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/r7/test_label_volume_device --gtest_filter='*Stats*' > /tmp/r.log 2>&1
echo "racecheck r7 exit $?" >> "$M"; tail -2 /tmp/r.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in o r7 r; do
    echo "== $v" >> "$L"; timeout 40 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 150 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "stats", $12}' "$L" | sort -k2,3 -s | grep -E "d0.1|mni"
cat "$M" "$T" "$S"
