#!/usr/bin/env bash
# Device call 24 (one GPU): the run forest for binary volumes (new tree) against the committed
# label code (old, src/label/cuda from HEAD in .ab/old-label.tar.gz), both built here, the bench
# alternated; the new tree's volume-label tests with the GPU required and memcheck; cupyx peers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
{ nvidia-smi -L; } > "$S" 2>&1
rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/oldsrc -xf -
rm -rf /tmp/oldsrc/src/label/cuda && tar -C /tmp/oldsrc -xzf .ab/old-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume test_cli_label_volume >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/oldsrc -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/bn.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume"; do
  echo "== $t" >> "$T"
  timeout 150 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|Expected|Which is|voxel" /tmp/t.log | head -20 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2; do
  for v in old new nohalving; do
    b=/tmp/bn; [ $v = old ] && b=/tmp/bo
    ab=0; [ $v = nohalving ] && ab=2
    echo "== $v round $round" >> "$L"
    WINNOW_LABEL_AB=$ab timeout 80 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "label round $round after $((SECONDS - start)) s" >> "$S"
done
M="$OUT/memcheck.log"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*:*EveryConnectivity*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -4 /tmp/m1.log >> "$M"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -4 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((560 - (SECONDS - start)))
[ $left -gt 30 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
grep -E "^==|^(random|mni)|phases" "$L"
grep -v "^\s*$" "$OUT/peers.log" | tail -30
cat "$M" "$T" "$S"
