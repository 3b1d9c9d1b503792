#!/usr/bin/env bash
# Call 51: three trees. old = HEAD 7509787; h1 = the working tree (statistics: 32-bit shared atomics,
# reductions only among lanes that share a label, the flush over listed slots, one-pass kernel
# capped at 56 registers; every local pass's shared forest addressed by 32-bit shared offsets
# (SharedForest), the bit-row pass's row starts in registers); h2 = h1 built with -DWINNOW_AB_ROUNDS (the 6/18-connected
# local pass and merge unite over a round count fixed up front, no vote a round). Tests on h2 and
# h1, memcheck on h2, racecheck on h2 and old (statistics), cupyx, the benchmark alternated (with
# the multi-label images, whose layer pass the shared forest touches), then ncu source counters of
# bits_local<6> on h2.
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
( cmake -S . -B /tmp/bh2 $cfg "-DCMAKE_CUDA_FLAGS=-lineinfo -DWINNOW_AB_ROUNDS" > /tmp/bh2.log 2>&1 && cmake --build /tmp/bh2 -j16 --target bench_label_volume_gpu $tests >> /tmp/bh2.log 2>&1; echo "h2 build exit $?" >> "$S" ) &
( cmake -S . -B /tmp/bh1 $cfg -DCMAKE_CUDA_FLAGS=-lineinfo > /tmp/bh1.log 2>&1 && cmake --build /tmp/bh1 -j16 --target bench_label_volume_gpu test_label_volume_device test_label_volume test_label >> /tmp/bh1.log 2>&1; echo "h1 build exit $?" >> "$S" ) &
( cmake -S /tmp/src_old -B /tmp/bold $cfg -DCMAKE_CUDA_FLAGS=-lineinfo > /tmp/bold.log 2>&1 && cmake --build /tmp/bold -j16 --target bench_label_volume_gpu test_label_volume_device >> /tmp/bold.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -iE " error" /tmp/bh1.log /tmp/bh2.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for v in h2 h1; do
  for t in $tests; do
    [ -x /tmp/b$v/tests/$t ] || continue
    echo "== $v $t" >> "$T"
    timeout 90 /tmp/b$v/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
    grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -12 >> "$T"
  done
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bh2/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
echo "memcheck h2 exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
for v in h2 old; do
  timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b$v/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*:*Stats*' > /tmp/r$v.log 2>&1
  echo "racecheck $v exit $?" >> "$M"; grep -E "hazard|Warning|Error|at .*0x|in .*cuh" /tmp/r$v.log | sort | uniq -c | sort -rn | head -12 >> "$M"; tail -2 /tmp/r$v.log >> "$M"
done
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in h1 h2 old; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
    echo "== $v images" >> "$OUT/images.log"; timeout 20 /tmp/b$v/bench/bench_label_volume_gpu --images --reps 10 >> "$OUT/images.log" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 470 ] && break
done
if [ $((SECONDS - start)) -lt 530 ]; then
  timeout 50 ncu --section SourceCounters --section WarpStateStats --import-source yes -k regex:bits_local -c 1 \
    -o /tmp/local6 /tmp/bh2/bench/bench_label_volume_gpu --reps 1 --case random_512_d0.5 --conn 6 > /tmp/ncu.log 2>&1
  echo "ncu exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i /tmp/local6.ncu-rep --page source --print-source sass --csv 2>> "$S" | gzip > "$OUT/local6-h2-sass.csv.gz"
fi
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
