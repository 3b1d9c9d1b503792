#!/usr/bin/env bash
# Device call 36 (one GPU): the 26-connectivity merge over block rows in three forms -- new (the
# working tree: 22 block row pairs a lane each, the left column read where needed), C (row pairs
# of voxel rows as before, the x boundary over block rows) and old (bd33cfd: the merge of voxel
# rows) -- built side by side; tests of new and C, 26-connectivity benchmark rounds of the three,
# a full round of new and old, sanitizers, the cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
for v in old c; do
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_$v -xf -
done
rm -rf /tmp/src_old/src/label/cuda && tar -C /tmp/src_old -xzf .ab/old-label.tar.gz
cp .ab/varC/src/label/cuda/volume_merge.cuh /tmp/src_c/src/label/cuda/
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume test_cli_label_volume >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/src_c -B /tmp/bc $cfg > /tmp/bc.log 2>&1 && cmake --build /tmp/bc -j16 --target bench_label_volume_gpu test_label_volume_device >> /tmp/bc.log 2>&1; echo "c build exit $?" >> "$S" ) &
( cmake -S /tmp/src_old -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for v in n c; do
  echo "== $v: every connectivity + patterns + near percolation" >> "$T"
  timeout 60 /tmp/b$v/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*NearPercolation*' > /tmp/t.log 2>&1; rc=$?
  echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern" /tmp/t.log | head -16 >> "$T"
done
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume"; do
  echo "== new $t" >> "$T"
  timeout 90 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label26.log"
for round in 1 2; do
  for v in o c n; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown --conn 26 >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 380 ] && break
done
F="$OUT/label.log"
for v in o n; do
  [ $((SECONDS - start)) -gt 440 ] && break
  echo "== $v" >> "$F"
  timeout 40 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$F" 2>&1
done
echo "full bench after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 50 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((575 - (SECONDS - start)))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, $5, $7}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
