#!/usr/bin/env bash
# Device call 37 (one GPU): new (the working tree: the 26-connectivity merge with the left column
# read ahead of the block row pairs' unions and its run counts kept) against d (a45484a, the
# merge over block rows) and s (70a436b, this session's start), built side by side; tests of new,
# benchmark rounds of the three (all cases), sanitizers, the cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
for v in d s; do
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_$v -xf -
  rm -rf /tmp/src_$v/src/label/cuda && tar -C /tmp/src_$v -xzf .ab/$v-label.tar.gz
done
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
for v in d s; do
  ( cmake -S /tmp/src_$v -B /tmp/b$v $cfg > /tmp/b$v.log 2>&1 && cmake --build /tmp/b$v -j16 --target bench_label_volume_gpu >> /tmp/b$v.log 2>&1; echo "$v build exit $?" >> "$S" ) &
done
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== new: every connectivity + patterns + near percolation" >> "$T"
timeout 60 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*NearPercolation*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern" /tmp/t.log | head -16 >> "$T"
for t in "test_label_volume_device" "test_label_volume"; do
  echo "== new $t" >> "$T"
  timeout 90 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2; do
  for v in s d n; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 380 ] && break
done
M="$OUT/sanitizers.log"
timeout 30 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((470 - (SECONDS - start)))
[ $left -gt 15 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, $5, $7}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
