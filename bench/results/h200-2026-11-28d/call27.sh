#!/usr/bin/env bash
# Device call 27 (one GPU): the new tree (byte rows read as aligned blocks; variants by
# WINNOW_LABEL_AB: 1/2 labels 8/16 words in flight, 4 no record init (timing only), 8 local
# unions walking together, 16 merge unions walking together) against HEAD's label code (old).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
{ nvidia-smi -L; } > "$S" 2>&1
rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/oldsrc -xf -
rm -rf /tmp/oldsrc/src/label/cuda && tar -C /tmp/oldsrc -xzf .ab/old-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/oldsrc -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/bn.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for ab in 0 27; do
  echo "== AB $ab test_label_volume_device" >> "$T"
  WINNOW_LABEL_AB=$ab timeout 100 /tmp/bn/tests/test_label_volume_device > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|Expected|Which is|voxel" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for v in old 0 1 2 8 16 4 old 0 27; do
  b=/tmp/bn; ab=$v; [ $v = old ] && b=/tmp/bo && ab=0
  echo "== $v" >> "$L"
  WINNOW_LABEL_AB=$ab timeout 60 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "bench $v after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 540 ] && break
done
M="$OUT/memcheck.log"
left=$((585 - (SECONDS - start)))
[ $left -gt 20 ] && WINNOW_LABEL_AB=27 timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
grep -E "^==|^(random|mni)|phases" "$L"
cat "$M" "$T" "$S"
