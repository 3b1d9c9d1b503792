#!/usr/bin/env bash
# Call 46: 6-connectivity labelled over the components of column planes (unite_planes), with
# call 45's merge candidate (h, the working tree) against HEAD (old): the label tests on the GPU,
# memcheck and racecheck, instruction counts of the 6-connected local pass in both trees, the
# cupyx peers, the benchmark alternated.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
rm -rf /tmp/src_old && mkdir -p /tmp/src_old && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_old -xf -
rm -rf /tmp/src_old/src && tar -C /tmp/src_old -xzf .ab/old-src.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
tests="test_label_volume_device test_label_volume test_label test_label_statistics test_label_chunks"
( cmake -S . -B /tmp/bh $cfg > /tmp/bh.log 2>&1 && cmake --build /tmp/bh -j16 --target bench_label_volume_gpu $tests >> /tmp/bh.log 2>&1; echo "h build exit $?" >> "$S" ) &
( cmake -S /tmp/src_old -B /tmp/bold $cfg > /tmp/bold.log 2>&1 && cmake --build /tmp/bold -j16 --target bench_label_volume_gpu >> /tmp/bold.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
tail -5 /tmp/bh.log >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in $tests; do
  echo "== $t" >> "$T"
  timeout 90 /tmp/bh/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bh/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bh/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
for v in h old; do
  for c in random_512_d0.5 mni152; do
    echo "== $v $c" >> "$OUT/ncu.log"
    timeout 40 ncu --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,sm__warps_active.avg.pct_of_peak_sustained_active \
      -k regex:bits_local -c 1 /tmp/b$v/bench/bench_label_volume_gpu --case $c --conn 6 --reps 1 2>&1 | grep -E "bits_local|duration|inst_executed|warps_active" | sed 's/(winnow::detail.*//' >> "$OUT/ncu.log"
  done
done
echo "ncu done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in h old; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 470 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
