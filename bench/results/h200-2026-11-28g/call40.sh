#!/usr/bin/env bash
# Device call 40 (one GPU): the label pass over batches of row words in raster order across the
# rows' ends (f8: the working tree, 8 words a batch; f16: 16 words) against h (c217018, a warp per
# row), built side by side; tests of f8, benchmark rounds of the three (all cases), memcheck on f8,
# the cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
for v in h f16; do
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_$v -xf -
  rm -rf /tmp/src_$v/src/label/cuda && tar -C /tmp/src_$v -xzf .ab/$v-label.tar.gz
done
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bf8 $cfg > /tmp/bf8.log 2>&1 && cmake --build /tmp/bf8 -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume >> /tmp/bf8.log 2>&1; echo "f8 build exit $?" >> "$S" ) &
for v in h f16; do
  ( cmake -S /tmp/src_$v -B /tmp/b$v $cfg > /tmp/b$v.log 2>&1 && cmake --build /tmp/b$v -j16 --target bench_label_volume_gpu >> /tmp/b$v.log 2>&1; echo "$v build exit $?" >> "$S" ) &
done
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== f8: every connectivity + thin + patterns + stats" >> "$T"
timeout 60 /tmp/bf8/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*OneVoxelThick*:*EdgeAndCorner*:*Stats*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern" /tmp/t.log | head -24 >> "$T"
if [ $rc -ne 0 ]; then cat "$T" "$S"; exit 1; fi
for t in "test_label_volume_device" "test_label_volume"; do
  echo "== f8 $t" >> "$T"
  timeout 90 /tmp/bf8/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in h f8 f16; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 390 ] && break
done
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bf8/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*OneVoxelThick*:*EdgeAndCorner*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((480 - (SECONDS - start)))
[ $left -gt 15 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "labels", $10}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
