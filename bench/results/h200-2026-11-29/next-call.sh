#!/usr/bin/env bash
# Template for a device call (one GPU), not run: the candidates prepared in the sixteenth session
# against HEAD. Before the call, on the development machine:
#   git apply bench/results/h200-2026-11-29/next-dealt-stretches-v2.diff          (and/or)
#   git apply bench/results/h200-2026-11-29/next-stats-packed-every-lane.diff
#   git archive HEAD src | gzip > .ab/old-src.tar.gz; cp bench/results/h200-2026-11-29/next-call.sh .ab/
# then run `bash .ab/next-call.sh` with carry [".ab", ".deps/debs"]. h is the working tree (the
# candidates: call 57's pool of surplus stretches, now in the brick's row words, dealt only where a
# lane holds 2 or more above the average, six blocks an SM held by launch bounds; the one-pass
# statistics reducing the packed words with every lane, without call 56's test for a lane alone,
# which lost 6 % on the MRI; the two change different kernels, so the local and statistics phases
# tell them apart), old is HEAD: the
# label tests with the GPU required, memcheck and racecheck, cupyx, the benchmark alternated, then
# ncu source counters of the 6-connected local pass on the MRI for both (call 57 lost 31 % there).
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
grep -iE " error" /tmp/bh.log | head -5 >> "$S"
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
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bh/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*:*Stats*' > /tmp/r.log 2>&1
echo "racecheck exit $?" >> "$M"; grep -E "Warning|Error|access at" /tmp/r.log | sort | uniq -c | sort -rn | head -8 >> "$M"; tail -2 /tmp/r.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3 4; do
  for v in h old; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
    echo "== $v images" >> "$OUT/images.log"; timeout 20 /tmp/b$v/bench/bench_label_volume_gpu --images --reps 10 >> "$OUT/images.log" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 400 ] && break
done
if [ $((SECONDS - start)) -lt 500 ]; then
  for v in h old; do
    timeout 40 ncu --section SourceCounters --section WarpStateStats --section Occupancy --import-source yes -k regex:bits_local -c 1 \
      -o /tmp/mri6$v /tmp/b$v/bench/bench_label_volume_gpu --reps 1 --case mni152 --conn 6 > /tmp/ncu.log 2>&1
    echo "ncu $v exit $? after $((SECONDS - start)) s" >> "$S"
    ncu -i /tmp/mri6$v.ncu-rep --page source --print-source sass --csv 2>> "$S" | gzip > "$OUT/mri6-$v-sass.csv.gz"
    ncu -i /tmp/mri6$v.ncu-rep --page details > "$OUT/mri6-$v-details.txt" 2>&1
  done
fi
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
