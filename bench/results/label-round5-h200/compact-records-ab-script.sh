#!/usr/bin/env bash
# temporary: compact statistics records (working tree) against the previous label.cu, one session
set -uo pipefail
source scripts/device-env.sh
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j 16 --target test_label bench_label_gpu winnow_cli > "$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export WINNOW_REQUIRE_GPU=1
build-gpu/tests/test_label > "$out/test-new.log" 2>&1; echo "test_label (new): rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/test-new.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/test-new.log" | head
# the previous label.cu in a copy of the tree
mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src apps bench tests examples scripts /tmp/old/ 2>/dev/null; cp scratch-old-label.cu /tmp/old/src/cuda/label.cu
ln -sfn "$PWD/.deps" /tmp/old/.deps
(cd /tmp/old && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure-old.log" 2>&1 && cmake --build build -j 16 --target bench_label_gpu > "$out/build-old.log" 2>&1) || { echo "old build failed"; tail -5 "$out/build-old.log"; }
echo "builds done $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  build-gpu/bench/bench_label_gpu --reps 20 --conn 8 --alg tile > "$out/bench-new-$i.log" 2>&1; echo "bench new $i rc=$?"
  /tmp/old/build/bench/bench_label_gpu --reps 20 --conn 8 --alg tile > "$out/bench-old-$i.log" 2>&1; echo "bench old $i rc=$?"
done
echo "all done $(( $(date +%s) - t0 )) s"
grep -E 'MISMATCH' "$out"/bench-*.log | head
