#!/usr/bin/env bash
# Call 52: the candidate f (the working tree: every local pass's shared forest addressed by 32-bit
# shared offsets, the bit-row pass's row starts in registers, a __syncwarp after the 16-byte row
# loads; statistics over 32-bit shared atomics, the sums' loads shifted down registers, and in
# passes the reductions among shared labels only and the flush over listed slots) against HEAD
# 7509787 (old): the label tests on the GPU, memcheck and racecheck, cupyx, the benchmark and the
# multi-label images alternated.
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
( cmake -S . -B /tmp/bf $cfg > /tmp/bf.log 2>&1 && cmake --build /tmp/bf -j16 --target bench_label_volume_gpu $tests >> /tmp/bf.log 2>&1; echo "f build exit $?" >> "$S" ) &
( cmake -S /tmp/src_old -B /tmp/bold $cfg > /tmp/bold.log 2>&1 && cmake --build /tmp/bold -j16 --target bench_label_volume_gpu >> /tmp/bold.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
grep -iE " error" /tmp/bf.log | head -5 >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in $tests; do
  echo "== $t" >> "$T"
  timeout 90 /tmp/bf/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bf/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
echo "memcheck exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/bf/tests/test_label_volume_device --gtest_filter='*EdgeAndCorner*:*Stats*' > /tmp/r.log 2>&1
echo "racecheck exit $?" >> "$M"; grep -E "Warning|Error|access at" /tmp/r.log | sort | uniq -c | sort -rn | head -8 >> "$M"; tail -2 /tmp/r.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3 4; do
  for v in f old; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
    echo "== $v images" >> "$OUT/images.log"; timeout 20 /tmp/b$v/bench/bench_label_volume_gpu --images --reps 10 >> "$OUT/images.log" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 440 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
