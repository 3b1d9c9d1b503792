#!/usr/bin/env bash
# Device call 35 (one GPU): 26-connectivity's merge over block rows, against the label code of bd33cfd
# (old: the local pass over blocks); tests first (short limit), the benchmark alternated, ncu of
# the merge, sanitizers, the cupyx peers in the same run.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
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
echo "== every connectivity + patterns" >> "$T"
timeout 60 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*NearPercolation*' > /tmp/t.log 2>&1; rc=$?
echo "exit $rc" >> "$T"; grep -E "FAILED|^\[  PASSED|Failure|Expected|Which is|random|pattern" /tmp/t.log | head -16 >> "$T"
if [ $rc != 0 ]; then cat "$T" "$S"; exit 1; fi
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
  [ $((SECONDS - start)) -gt 400 ] && break
done
N="$OUT/ncu.log"
for c in random_512_d0.9 random_512_d0.5; do
  for v in old new; do
    [ $((SECONDS - start)) -gt 470 ] && break
    b=/tmp/bn; [ $v = old ] && b=/tmp/bo
    echo "== $v $c 26" >> "$N"
    timeout 30 ncu --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio \
      -k regex:"bits_merge" -c 1 $b/bench/bench_label_volume_gpu --case $c --conn 26 --reps 1 2>&1 | grep -E "bits_merge|duration|inst_executed|warps_active" | sed 's/(winnow::detail.*//' | head -8 >> "$N"
  done
done
echo "ncu done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*' > /tmp/m1.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -3 /tmp/m1.log >> "$M"
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bn/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
left=$((570 - (SECONDS - start)))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
awk '/^== /{v=$2} /phases/{print v, c, $5, $7, $11, $13} /^(random|mni)/{c=$1" "$2" "$3" "$4}' "$L" | sort -k2,3 -s
cat "$N" "$M" "$T" "$S"
