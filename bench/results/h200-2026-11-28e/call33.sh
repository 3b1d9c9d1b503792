#!/usr/bin/env bash
# Device call 33 (one GPU, short): the statistics' fill sized to its work and the passes' kernel
# launched only when the capacity allows passes, against the label code of cef9317 (old);
# device tests with the GPU required; the volume benchmark alternated.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar -C . --exclude=./.ab --exclude=./.deps -cf - . | tar -C /tmp/oldsrc -xf -
rm -rf /tmp/oldsrc/src/label/cuda && tar -C /tmp/oldsrc -xzf .ab/old-label.tar.gz
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
( cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu test_label_volume_device >> /tmp/bn.log 2>&1; echo "new build exit $?" >> "$S" ) &
( cmake -S /tmp/oldsrc -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j16 --target bench_label_volume_gpu >> /tmp/bo.log 2>&1; echo "old build exit $?" >> "$S" ) &
wait
echo "built after $((SECONDS - start)) s" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
echo "== test_label_volume_device" >> "$T"
timeout 60 /tmp/bn/tests/test_label_volume_device > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
grep -E "FAILED|^\[  PASSED|tests ran|Failure" /tmp/t.log | head -12 >> "$T"
echo "tests done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for v in old new old new; do
  [ $((SECONDS - start)) -gt 255 ] && break
  b=/tmp/bn; [ $v = old ] && b=/tmp/bo
  echo "== $v" >> "$L"; timeout 40 $b/bench/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "bench $v after $((SECONDS - start)) s" >> "$S"
done
cat "$T" "$S"
