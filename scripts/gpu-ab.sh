#!/usr/bin/env bash
# On a CUDA machine: an A/B of benchmarks between this tree ("after") and the same tree with an
# earlier version of some files ("before"), built side by side for sm_90 and run alternately in
# one session (so both meet the same card, clocks and neighbours), then tests of this tree with
# WINNOW_REQUIRE_GPU=1.
#   scripts/gpu-ab.sh OVERLAY LOG_DIR 'BENCH [ARGS...]' ['BENCH [ARGS...]' ...]
# BENCH is a benchmark target (bench_isosurface_gpu, bench_isosurface_cpu ...), each quoted with
# its arguments. OVERLAY holds the earlier files at their paths in the tree
# (OVERLAY/src/isosurface/cuda/isosurface.cu); e.g.
#   mkdir -p .ab && git archive REV src include bench | tar -x -C .ab
# (the tree travels to the GPU host without its history; .ab is ignored, so carry it).
# WINNOW_AB_ROUNDS: rounds of A then B (default 2); WINNOW_AB_TESTS: test runs of the after tree,
# 'BINARY[:GTEST_FILTER]' separated by spaces (default none), run before the benchmarks, each
# under WINNOW_AB_TEST_SECONDS (default 120): one that runs past it stops the A/B there (a hang
# would spend a time-limited machine); WINNOW_AB_SECONDS: no round starts after this many
# seconds from the start (default none: all rounds); WINNOW_AB_JOBS: build jobs of each side
# (default half the cores). Logs: LOG_DIR/<k>-<bench>-{before,after}-N.log (k: the spec's place
# in the list), LOG_DIR/test-*.log, and LOG_DIR/timeline.txt (seconds from the start of each step).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
overlay="$(realpath "$1")"
logs="$(realpath -m "$2")"
shift 2
cd "$root" || exit 1
mkdir -p "$logs"
start=$SECONDS
mark() { echo "$((SECONDS - start)) s: $*" >> "$logs/timeline.txt"; }
: > "$logs/timeline.txt"
# shellcheck source=/dev/null
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
jobs=${WINNOW_AB_JOBS:-$(($(nproc) / 2))}
after=/tmp/winnow-ab-after
before=/tmp/winnow-ab-before
rm -rf "$before-src" && mkdir -p "$before-src"
tar --exclude=./.git --exclude=./.whl --exclude=./.ab -cf - . | tar -xf - -C "$before-src"
cp -a "$overlay"/. "$before-src"/  # -a: a second run rebuilds nothing
benches=()
for spec in "$@"; do read -r name _ <<< "$spec" && benches+=("bench/$name"); done
tests=()
for t in ${WINNOW_AB_TESTS:-}; do tests+=("tests/${t%%:*}"); done
configure() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure-$3.log" 2>&1; }
configure . "$after" after && configure "$before-src" "$before" before || { tail -20 "$logs"/configure-*.log; exit 1; }
ninja -C "$after" -j "$jobs" "${benches[@]}" "${tests[@]}" > "$logs/build-after.log" 2>&1 &
ninja -C "$before" -j "$jobs" "${benches[@]}" > "$logs/build-before.log" 2>&1 &
wait
mark built
for side in after before; do
  for b in "${benches[@]}"; do
    [ -x "/tmp/winnow-ab-$side/$b" ] || { grep -E 'error' "$logs/build-$side.log" | head -20; exit 1; }
  done
done
status=0
for t in ${WINNOW_AB_TESTS:-}; do
  binary=${t%%:*} filter=${t#*:}
  [ "$filter" = "$t" ] && filter='*'
  timeout "${WINNOW_AB_TEST_SECONDS:-120}" "$after/tests/$binary" --gtest_filter="$filter" > "$logs/test-$binary.log" 2>&1
  code=$?
  mark "test $binary exit $code"
  [ $code = 0 ] || status=1
  if [ $code = 124 ]; then
    echo "$binary ran past ${WINNOW_AB_TEST_SECONDS:-120} s: stopped (a hang?)"
    tail -5 "$logs/test-$binary.log"
    exit 1
  fi
done
[ -n "${WINNOW_AB_TESTS:-}" ] && grep -E '^\[  (PASSED|FAILED) ' "$logs"/test-*.log
for ((round = 1; round <= ${WINNOW_AB_ROUNDS:-2}; ++round)); do
  if [ -n "${WINNOW_AB_SECONDS:-}" ] && [ $((SECONDS - start)) -gt "$WINNOW_AB_SECONDS" ]; then
    echo "round $round not started: past ${WINNOW_AB_SECONDS} s"
    break
  fi
  k=0
  for spec in "$@"; do
    read -r name arguments <<< "$spec"
    k=$((k + 1))
    for side in before after; do
      # shellcheck disable=SC2086
      "/tmp/winnow-ab-$side/bench/$name" $arguments > "$logs/$k-$name-$side-$round.log" 2>&1 || status=1
    done
  done
  mark "round $round"
done
for f in "$logs"/*-before-*.log "$logs"/*-after-*.log; do
  [ -e "$f" ] || continue
  printf '\n== %s\n' "$(basename "$f")"
  cat "$f"
done
exit $status
