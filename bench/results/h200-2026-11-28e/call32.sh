#!/usr/bin/env bash
# Device call 32 (one GPU): the committed tree (9ec2956) (the statistics one way or the other by labels a
# brick: in one pass, or in passes with only the marked roots' records filled first) against
# the label code of cef9317 (old); tests with the GPU required, memcheck and racecheck; ncu of the
# statistics kernels; cupyx in the same run.
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
echo "== crowded" >> "$T"
timeout 40 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Crowded*:*StatsCapacity*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is" /tmp/t.log | head -10 >> "$T"
if [ $rc = 124 ]; then cat "$T" "$S"; exit 1; fi
for t in "test_label_volume_device" "test_label_volume" "test_cli_label_volume" "test_label --gtest_filter=*Cuda*:*CUDA*:*cuda*:*Device*:*Gpu*:*Band*:LabelApi*"; do
  echo "== $t" >> "$T"
  timeout 90 /tmp/bn/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|tests ran|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for v in old new old new; do
  b=/tmp/bn; [ $v = old ] && b=/tmp/bo
  echo "== $v" >> "$L"
  timeout 60 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "bench $v after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 440 ] && break
done
N="$OUT/ncu.log"
for c in random_512_d0.9 random_512_d0.5 random_512_d0.1; do
  for v in new; do
    [ $((SECONDS - start)) -gt 480 ] && break
    b=/tmp/bn; [ $v = old ] && b=/tmp/bo
    echo "== $v $c 6" >> "$N"
    timeout 30 ncu --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      -k regex:"init_records|brick_stats" -c 4 $b/bench/bench_label_volume_gpu --case $c --conn 6 --reps 1 2>&1 | grep -E "init_records|brick_stats|duration|inst_executed|bytes|warps_active" | sed 's/(winnow::detail.*//' | head -24 >> "$N"
  done
done
echo "ncu done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Crowded*:*StatsCapacity*:*OneVoxel*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*Crowded*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((570 - (SECONDS - start)))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /phases/{print v, c, $5, $7, $11, $13} /^(random|mni)/{c=$1" "$2" "$3" "$4}' "$L" | sort -k2,3 -s
cat "$N" "$M" "$T" "$S"
