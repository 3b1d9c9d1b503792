#!/usr/bin/env bash
# Call 50: the statistics' table over 32-bit shared atomics (h, the working tree) against HEAD
# 7509787 (old): the label tests on the GPU (h holds 7509787 too), memcheck and racecheck, the cupyx
# peers, the benchmark alternated two rounds; then where bits_local<6> (512^3 d0.5) and
# brick_stats (256^3 d0.1 26, 512^3 d0.1 6) spend their instructions: ncu source counters on h.
# Both trees built with -lineinfo.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
rm -rf /tmp/src_old && mkdir -p /tmp/src_old && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_old -xf -
rm -rf /tmp/src_old/src && tar -C /tmp/src_old -xzf .ab/old-src.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS=-lineinfo"
tests="test_label_volume_device test_label_volume test_label test_label_statistics test_label_chunks"
( cmake -S . -B /tmp/bh $cfg > /tmp/bh.log 2>&1 && cmake --build /tmp/bh -j16 --target bench_label_volume_gpu $tests >> /tmp/bh.log 2>&1; echo "h build exit $?" >> "$S" ) &
( cmake -S /tmp/src_old -B /tmp/bold $cfg > /tmp/bold.log 2>&1 && cmake --build /tmp/bold -j16 --target bench_label_volume_gpu >> /tmp/bold.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -iE "error" /tmp/bh.log | head -5 >> "$S"
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
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bh/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*:*Stats*' > /tmp/m2.log 2>&1
echo "racecheck exit $?" >> "$M"; tail -3 /tmp/m2.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2; do
  for v in h old; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 400 ] && break
done
P=/tmp/prof; mkdir -p $P
prof() {  # name, kernel regex, count, bench args...
  local name=$1 k=$2 c=$3; shift 3
  timeout 60 ncu --section SourceCounters --section WarpStateStats --section Occupancy --section LaunchStats --import-source yes \
    -k regex:$k -c $c -o $P/$name /tmp/bh/bench/bench_label_volume_gpu --reps 1 "$@" > $P/$name.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i $P/$name.ncu-rep --page source --print-source sass --csv > $P/$name-sass.csv 2>> "$S"
  ncu -i $P/$name.ncu-rep --page source --print-source cuda --csv > $P/$name-cuda.csv 2>> "$S"
  ncu -i $P/$name.ncu-rep --page details > $P/$name-details.txt 2>> "$S"
  rm -f $P/$name.ncu-rep
}
[ $((SECONDS - start)) -lt 470 ] && prof local6 bits_local 1 --case random_512_d0.5 --conn 6
[ $((SECONDS - start)) -lt 500 ] && prof stats26 brick_stats 2 --case random_256_d0.1 --conn 26
[ $((SECONDS - start)) -lt 530 ] && prof stats6 brick_stats 2 --case random_512_d0.1 --conn 6
tar -C $P -czf "$OUT/ncu.tar.gz" . 2>> "$S"
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
