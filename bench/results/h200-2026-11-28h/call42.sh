#!/usr/bin/env bash
# Call 42: the prepared candidates (numbered roots, the same with dependent launches, both with the
# statistics over occupied slots, and that with __launch_bounds__(128, 8)) against HEAD.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
variants="nr nrp all allb"
for v in $variants; do
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/src_$v -xf -
  rm -rf /tmp/src_$v/src && tar -C /tmp/src_$v -xzf .ab/$v-src.tar.gz
done
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
targets="--target bench_label_volume_gpu test_label_volume_device test_label_volume"
( cmake -S . -B /tmp/bh $cfg > /tmp/bh.log 2>&1 && cmake --build /tmp/bh -j16 --target bench_label_volume_gpu >> /tmp/bh.log 2>&1; echo "h build exit $?" >> "$S" ) &
for v in $variants; do
  ( cmake -S /tmp/src_$v -B /tmp/b$v $cfg > /tmp/b$v.log 2>&1 && cmake --build /tmp/b$v -j16 $targets >> /tmp/b$v.log 2>&1; echo "$v build exit $?" >> "$S" ) &
done
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for v in $variants; do
  for t in test_label_volume_device test_label_volume; do
    echo "== $v $t" >> "$T"
    timeout 60 /tmp/b$v/tests/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
    grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -12 >> "$T"
  done
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in h $variants; do
    echo "== $v" >> "$L"
    timeout 30 /tmp/b$v/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 420 ] && break
done
M="$OUT/sanitizers.log"
for v in all allb; do
  timeout 30 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b$v/tests/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
  echo "$v memcheck exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$M" "$T" "$S"
