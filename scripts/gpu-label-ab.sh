#!/usr/bin/env bash
# On a CUDA machine: an A/B of the GPU labeling benchmark between this tree and the same tree with
# an earlier version of some files, built side by side for sm_90 and run alternately in one
# session (so both meet the same card, clocks and neighbours), then the labeling tests of this
# tree with WINNOW_REQUIRE_GPU=1.
#   scripts/gpu-label-ab.sh OVERLAY LOG_DIR [bench_label_volume_gpu arguments...]
# OVERLAY holds the earlier files at their paths in the tree (OVERLAY/src/label/cuda/x.cu); e.g.
#   mkdir -p .ab/src/label/cuda && git show HEAD~1:src/label/cuda/label_volume.cu > .ab/src/label/cuda/label_volume.cu
# (the tree travels to the GPU host without its history). WINNOW_AB_ROUNDS: rounds of A then B
# (default 2); WINNOW_AB_TESTS=0 leaves the tests out; WINNOW_AB_JOBS: build jobs of each side
# (default half the cores). The logs: LOG_DIR/bench-{before,after}-N.log, LOG_DIR/test-*.log.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
overlay="$(realpath "$1")"
logs="$(realpath -m "$2")"
shift 2
cd "$root"
mkdir -p "$logs"
# shellcheck source=/dev/null
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
jobs=${WINNOW_AB_JOBS:-$(($(nproc) / 2))}
after=/tmp/winnow-ab-after
before=/tmp/winnow-ab-before
rm -rf "$before-src" && mkdir -p "$before-src"
tar --exclude=./.git --exclude=./.whl -cf - . | tar -xf - -C "$before-src"
cp -a "$overlay"/. "$before-src"/  # -a: a second run rebuilds nothing
configure() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure-$3.log" 2>&1; }
configure . "$after" after && configure "$before-src" "$before" before || { tail -20 "$logs"/configure-*.log; exit 1; }
ninja -C "$after" -j "$jobs" bench/bench_label_volume_gpu tests/test_label_volume_device tests/test_label \
  tests/test_label_volume > "$logs/build-after.log" 2>&1 &
ninja -C "$before" -j "$jobs" bench/bench_label_volume_gpu > "$logs/build-before.log" 2>&1 &
wait
for side in after before; do
  [ -x "/tmp/winnow-ab-$side/bench/bench_label_volume_gpu" ] || { grep -E 'error' "$logs/build-$side.log" | head -20; exit 1; }
done
status=0
for ((round = 1; round <= ${WINNOW_AB_ROUNDS:-2}; ++round)); do
  "$before/bench/bench_label_volume_gpu" "$@" > "$logs/bench-before-$round.log" 2>&1 || status=1
  "$after/bench/bench_label_volume_gpu" "$@" > "$logs/bench-after-$round.log" 2>&1 || status=1
done
if [ "${WINNOW_AB_TESTS:-1}" != 0 ]; then
  "$after/tests/test_label_volume_device" > "$logs/test-label-volume-device.log" 2>&1 || status=1
  "$after/tests/test_label" --gtest_filter='*Cuda*:*CUDA*:*Multi*:*Device*:*Gpu*' > "$logs/test-label-cuda.log" 2>&1 || status=1
  "$after/tests/test_label_volume" --gtest_filter='*Cuda*:*CUDA*:*Band*:*Wide*' > "$logs/test-label-volume-cuda.log" 2>&1 || status=1
  grep -E '^\[  (PASSED|FAILED) ' "$logs"/test-*.log
fi
for f in "$logs"/bench-*.log; do printf '\n== %s\n' "$(basename "$f")"; cat "$f"; done
exit $status
