#!/usr/bin/env bash
# temporary: A/B of the labeling tile passes on the device
set -uo pipefail
source scripts/device-env.sh
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j 16 --target test_label bench_label_gpu winnow_cli > "$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export WINNOW_REQUIRE_GPU=1
build-gpu/tests/test_label > "$out/test-runs.log" 2>&1; echo "test_label (runs): rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/test-runs.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/test-runs.log" | head
WINNOW_LABEL_TILE_PASS=blocks build-gpu/tests/test_label --gtest_filter='*cuda*:LabelDevice*' > "$out/test-blocks.log" 2>&1; echo "test_label cuda (blocks): rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/test-blocks.log" | tr '\n' ' ')"
echo "tests done $(( $(date +%s) - t0 )) s"
build-gpu/bench/bench_label_gpu --reps 20 --conn 8 --alg tile --dump build-gpu/masks > "$out/bench-runs.log" 2>&1; echo "bench runs rc=$?"
WINNOW_LABEL_TILE_PASS=blocks build-gpu/bench/bench_label_gpu --reps 20 --conn 8 --alg tile > "$out/bench-blocks.log" 2>&1; echo "bench blocks rc=$?"
build-gpu/bench/bench_label_gpu --reps 20 --conn 8 --alg tile > "$out/bench-runs2.log" 2>&1; echo "bench runs2 rc=$?"
timeout 150 python3 bench/label_peers.py --reps 10 --no-opencv --conn 8 --label-only --dump build-gpu/masks > "$out/peers.log" 2>&1; echo "peers rc=$?"
echo "all done $(( $(date +%s) - t0 )) s"
grep -E 'MISMATCH' "$out"/bench-*.log | head
