#!/usr/bin/env bash
# Device call 38 (one GPU): the per-brick x boundary for 26-connectivity's merge (voxel rows where
# a brick's first column holds fewer than kBlockXBoundaryVoxels voxels, block rows elsewhere) at
# thresholds 16 (t16) and 48 (t48), against h (97d1272, block rows always), built side by side;
# tests of t16, benchmark rounds of the three (all cases), sanitizers on t16, the cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
for v in t16 t48; do
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_$v -xf -
  rm -rf /tmp/src_$v/src/label/cuda && tar -C /tmp/src_$v -xzf .ab/$v-label.tar.gz
done
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S /tmp/src_t16 -B /tmp/bt16 $cfg > /tmp/bt16.log 2>&1 && cmake --build /tmp/bt16 -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume >> /tmp/bt16.log 2>&1; echo "t16 build exit $?" >> "$S" ) &
( cmake -S /tmp/src_t48 -B /tmp/bt48 $cfg > /tmp/bt48.log 2>&1 && cmake --build /tmp/bt48 -j16 --target bench_label_volume_gpu >> /tmp/bt48.log 2>&1; echo "t48 build exit $?" >> "$S" ) &
( cmake -S . -B /tmp/bh $cfg > /tmp/bh.log 2>&1 && cmake --build /tmp/bh -j16 --target bench_label_volume_gpu >> /tmp/bh.log 2>&1; echo "h build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== t16: every connectivity + patterns + near percolation" >> "$T"
timeout 60 /tmp/bt16/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*NearPercolation*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern" /tmp/t.log | head -16 >> "$T"
for t in "test_label_volume_device" "test_label_volume"; do
  echo "== t16 $t" >> "$T"
  timeout 90 /tmp/bt16/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in h t16 t48; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 380 ] && break
done
M="$OUT/sanitizers.log"
timeout 30 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bt16/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bt16/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((470 - (SECONDS - start)))
[ $left -gt 15 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
