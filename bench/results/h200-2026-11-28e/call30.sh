#!/usr/bin/env bash
# Device call 30 (one GPU): the tree with the statistics in passes (records filled only where the
# merge marked their roots) and the bit-row local pass variants (WINNOW_LABEL_AB: 2 direct rows
# before diagonal ones, 4 repeated pairs left out, 6 both) against the committed label code (old).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
{ nvidia-smi -L; git log --oneline -1; } > "$S" 2>&1
rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/oldsrc -xf -
rm -rf /tmp/oldsrc/src/label/cuda && tar -C /tmp/oldsrc -xzf .ab/old-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume test_cli_label_volume test_label >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/oldsrc -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/bn.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
# A hang shows here within 40 s; then the call stops at once.
echo "== crowded" >> "$T"
timeout 40 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Crowded*:*StatsCapacity*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is" /tmp/t.log | head -10 >> "$T"
if [ $rc = 124 ]; then cat "$T" "$S"; exit 1; fi
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume" "test_label --gtest_filter=*Cuda*:*CUDA*:*cuda*:*Device*:*Gpu*:*Band*:LabelApi*"; do
  echo "== $t" >> "$T"
  timeout 90 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "== AB 6 test_label_volume_device" >> "$T"
WINNOW_LABEL_AB=6 timeout 60 /tmp/bn/tests/test_label_volume_device > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -6 >> "$T"
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for v in old 0 2 4 6 old 0 6; do
  b=/tmp/bn; ab=$v; [ $v = old ] && b=/tmp/bo && ab=0
  echo "== $v" >> "$L"
  WINNOW_LABEL_AB=$ab timeout 60 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "bench $v after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 430 ] && break
done
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*:*Crowded*:*StatsCapacity*:*OneVoxel*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Crowded*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((570 - (SECONDS - start)))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
grep -E "^==|^(random|mni)" "$L" | tail -60
cat "$M" "$T" "$S"
