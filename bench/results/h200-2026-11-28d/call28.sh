#!/usr/bin/env bash
# Device call 28 (one GPU): the committed tree (faa5cd8: unions walking both finds together, run
# labels 8 words at a time) against the label code before it (old, .ab/old-label.tar.gz), volume
# and 2D benchmarks alternated; label tests with the GPU required, memcheck, racecheck; cupyx;
# ncu source counters of the bit-row local pass and merge.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
{ nvidia-smi -L; git log --oneline -1; } > "$S" 2>&1
rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/oldsrc -xf -
rm -rf /tmp/oldsrc/src/label/cuda && tar -C /tmp/oldsrc -xzf .ab/old-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu bench_label_gpu test_label_volume_device test_label_volume test_cli_label_volume test_label >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/oldsrc -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu bench_label_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -E "error" /tmp/bn.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume" "test_label --gtest_filter=*Cuda*:*CUDA*:*cuda*:*Device*:*Gpu*:*Band*:LabelApi*"; do
  echo "== $t" >> "$T"
  timeout 150 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"; I="$OUT/label2d.log"
for v in old new old new; do
  b=/tmp/bn; [ $v = old ] && b=/tmp/bo
  echo "== $v" >> "$L"; timeout 60 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "== $v" >> "$I"; timeout 60 $b/bench/bench_label_gpu --reps 10 >> "$I" 2>&1
  echo "bench $v after $((SECONDS - start)) s" >> "$S"
done
M="$OUT/sanitizers.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*:*EveryConnectivity*:*StatsCapacity*:*OneVoxel*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*NearPercolation*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label --gtest_filter='*Cuda*:*cuda*' > /tmp/m3.log 2>&1
echo "memcheck 2D exit $?" >> "$M"; tail -3 /tmp/m3.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
for spec in "bits_local_kernel random_512_d0.5 6 local" "bits_merge_kernel random_512_d0.9 26 merge"; do
  set -- $spec
  [ $((SECONDS - start)) -gt 500 ] && break
  timeout 60 ncu --section SourceCounters --import-source yes -k regex:$1 -c 1 -o /tmp/ncu_$4 /tmp/bn/bench/bench_label_volume_gpu --case $2 --conn $3 --reps 1 > /tmp/ncu_$4.log 2>&1
  ncu -i /tmp/ncu_$4.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > "$OUT/ncu-$4.csv.gz"
  echo "ncu $4 after $((SECONDS - start)) s" >> "$S"
done
grep -E "^==|^(random|mni)|phases" "$L" | tail -30
grep -v "^\s*$" "$OUT/peers.log" | tail -16
cat "$M" "$T" "$S"
