#!/usr/bin/env bash
# Call 58: binaries built on the development machine (nvcc 13.0, sm_90, Release). o = HEAD d465093;
# h = o + next-dealt-stretches-v2.diff + next-stats-packed-every-lane.diff; s = h + next-shared-halving.diff.
# Tests of h and s with the GPU required, memcheck/racecheck, cupyx, the volume benchmark alternated
# (o h s), the 2D image benchmark (h s: the first two diffs touch only volume kernels), then ncu of the
# 6-connected local pass on the MRI for o and h.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins58.txz
ldd /tmp/b/h/bench_label_volume_gpu | grep "not found" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for v in h s; do
  for t in test_label_volume_device test_label_volume test_label_statistics test_label; do [ -x /tmp/b/$v/$t ] || continue
    echo "== $v $t" >> "$T"; timeout 60 /tmp/b/$v/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
    grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -8 >> "$T"
  done
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/h/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
echo "memcheck h exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
for v in h s; do
  timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/$v/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*Stats*' > /tmp/r.log 2>&1
  echo "racecheck $v exit $?" >> "$M"; grep -E "Warning|Error|access at" /tmp/r.log | sort | uniq -c | sort -rn | head -8 >> "$M"; tail -2 /tmp/r.log >> "$M"
done
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3 4; do
  for v in o h s; do
    echo "== $v" >> "$L"; timeout 30 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  for v in h s; do
    echo "== $v" >> "$OUT/images2d.log"; timeout 30 /tmp/b/$v/bench_label_gpu --reps 10 >> "$OUT/images2d.log" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 360 ] && break
done
if [ $((SECONDS - start)) -lt 470 ]; then
  for v in o h; do
    timeout 40 ncu --section SourceCounters --section WarpStateStats --section Occupancy -k regex:bits_local -c 1 \
      -o /tmp/mri6$v /tmp/b/$v/bench_label_volume_gpu --reps 1 --case mni152 --conn 6 > /tmp/ncu.log 2>&1
    echo "ncu $v exit $? after $((SECONDS - start)) s" >> "$S"
    ncu -i /tmp/mri6$v.ncu-rep --page details > "$OUT/mri6-$v-details.txt" 2>&1
  done
fi
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
