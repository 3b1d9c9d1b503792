#!/usr/bin/env bash
# Device call 39 (one GPU): the statistics pass dealing a brick's runs to the lanes 32 a round
# (new, the working tree) against h (c217018, each lane walking its own rows' runs), built side by
# side; tests of new, benchmark rounds of both (all cases), sanitizers on new, the cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
rm -rf /tmp/src_h && mkdir -p /tmp/src_h && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_h -xf -
rm -rf /tmp/src_h/src/label/cuda && tar -C /tmp/src_h -xzf .ab/h-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/src_h -B /tmp/bh $cfg > /tmp/bh.log 2>&1 && cmake --build /tmp/bh -j16 --target bench_label_volume_gpu >> /tmp/bh.log 2>&1; echo "h build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/bn.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== new: statistics + every connectivity + multilabel + layers" >> "$T"
timeout 60 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Stats*:*EveryConnectivity*:*Multilabel*:*SingleLayers*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern|stat" /tmp/t.log | head -24 >> "$T"
if [ $rc -ne 0 ]; then cat "$T" "$S"; exit 1; fi
for t in "test_label_volume_device" "test_label_volume"; do
  echo "== new $t" >> "$T"
  timeout 90 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3 4; do
  for v in h n; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 360 ] && break
done
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Stats*:*EveryConnectivity*:*SingleLayers*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*StatsOfCrowdedBricks*:*SingleLayers*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((490 - (SECONDS - start)))
[ $left -gt 15 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
