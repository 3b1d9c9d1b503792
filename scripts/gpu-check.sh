#!/usr/bin/env bash
# On a CUDA machine: build for sm_90, run every test with WINNOW_REQUIRE_GPU=1 (a skipped GPU
# test fails), run the GPU benchmarks, and print a short table last.
#   scripts/gpu-check.sh [LOG_DIR]        (default: build-gpu/logs)
# WINNOW_COMMIT names the commit where the tree travels without its git history.
# WINNOW_GPU_CHECK_STEPS picks steps (default: all), e.g. "tests compact" then "label puzzle" to
# split the work over two calls of a time-limited machine; the build step always runs.
# Extra libraries missing on the GPU host can be carried as .debs: scripts/fetch-device-deps.sh.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
logs="${1:-build-gpu/logs}"
mkdir -p "$logs"
# shellcheck source=/dev/null
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
build=build-gpu
jobs=$(nproc)
status=0

step() { printf '\n== %s\n' "$*"; }
steps=" ${WINNOW_GPU_CHECK_STEPS:-tests python large sanitize compact histopyramid isosurface label peers label3d puzzle cli} "
want() { [[ "$steps" == *" $1 "* ]]; }

step "configure + build (sm_90)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure.log" 2>&1 \
  || { tail -30 "$logs/configure.log"; exit 1; }
grep -E '^-- winnow:' "$logs/configure.log"
if ! cmake --build "$build" -j "$jobs" > "$logs/build.log" 2>&1; then
  grep -E 'error|Error' "$logs/build.log" | head -40
  exit 1
fi
"$build/apps/winnow/winnow" devices | tee "$logs/devices.txt"

if want tests; then
  step "tests (WINNOW_REQUIRE_GPU=1)"
  ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 300 -LE slow > "$logs/ctest.log" 2>&1 || status=1
  grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped\)' "$logs/ctest.log" | tail -25
fi

# The Python package built with the host's nanobind, scikit-build-core and numpy (no network), into
# a venv that sees the system's packages (cupy, torch, scipy ...), and its pytest suite with the GPU
# required.
if want python; then
  step "python (pip install --no-build-isolation, pytest, WINNOW_REQUIRE_GPU=1)"
  CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90" JOBS=$jobs scripts/python-test.sh "$build" --offline \
    > "$logs/python.log" 2>&1 || status=1
  tail -5 "$logs/python.log"
fi

# The opt-in cases beyond 2^31 pixels (labelled in bands on the GPU), 2^32 elements (CPU
# compaction), 2^32 voxels (voxel compaction, CPU and CUDA) and volume labeling beyond 2^31
# voxels (CPU) and 2^32 (CUDA, in bands): ~11 GB, ~15 GB, then 55 GB of host memory at the last.
if want large; then
  step "large tests (WINNOW_LARGE_TESTS=1)"
  { WINNOW_LARGE_TESTS=1 "$build/tests/test_label" --gtest_filter='LabelApi.Huge*:LabelBands.*' &&
    WINNOW_LARGE_TESTS=1 "$build/tests/test_compact" --gtest_filter='CompactLarge.*' &&
    WINNOW_LARGE_TESTS=1 "$build/tests/test_voxels" --gtest_filter='*Beyond2Pow32Voxels*' &&
    WINNOW_LARGE_TESTS=1 "$build/tests/test_label_volume" --gtest_filter='*BeyondTwoToThe3*'; } \
    > "$logs/large.log" 2>&1 || status=1
  grep -E '^\[ +(OK|FAILED|SKIPPED|PASSED) ' "$logs/large.log" | tail -12
fi

# compute-sanitizer over the CUDA tests of every capability, on the sizes that finish in minutes
# (the 2^24 and beyond-2^32 compaction and the large labeling cases are left out): memcheck,
# racecheck, initcheck and synccheck (WINNOW_SANITIZE_TOOLS picks some). Anything reported fails.
if want sanitize; then
  step "sanitize (compute-sanitizer)"
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  declare -A filter=(
    [test_compact]='CompactDevice.*:Variants/CompactTest.PredicateOps/cuda_*:Backends/ImageCompactBackend.*/cuda:CompactGeneric.TypesWithoutPrecompiledPathCuda-CompactDevice.Large2Pow24Plus7:CompactDevice.MoreThan2Pow32Elements'
    [test_label]='Variants/Label.*/cuda_*:LabelDevice.*-Variants/Label.Large/*'
    [test_puzzle]='PuzzleExhaustive.GpuEqualsCpu:PuzzleCompat.GpuMatchesCpu:Backends/Puzzle*/cuda'
    [test_histopyramid]='*cuda*:ExpandDevice.*'
    [test_label_volume_device]='LabelVolumeDevice*'
    [test_isosurface]='IsosurfaceDevice.*:IsosurfaceBackends.*'
  )
  # racecheck is the slowest (every shared-memory access): the kernels with shared memory, on
  # fewer sizes (the shared-memory and ring compaction kernels, both labeling algorithms, the
  # image tiles' unions across their bricks: about 90 s on an H200).
  declare -A race_filter=(
    [test_compact]='CompactDevice.ValuesIndicesSizingCallAllVariants:CompactDevice.RingEveryElementSize:Variants/CompactTest.PredicateOps/cuda_single_pass_*:Backends/ImageCompactBackend.StridedView/cuda'
    [test_label]='Variants/Label.RandomDensities/cuda_*:Variants/Label.Patterns/cuda_*:LabelDevice.*'
    [test_histopyramid]='ExpandDevice.CapacityAndEmpty:ExpandDevice.CapturedIntoAGraph:Backends/Expand.CapacityBelowTotal/cuda:Backends/Expand.EmptyInput/cuda'
    [test_label_volume_device]='LabelVolumeDevice.RandomBinaryEveryConnectivity:LabelVolumeDevice.EdgeAndCornerPatterns:LabelVolumeDevice.StatsCapacityBelowCount:LabelVolumeDevice.SingleLayersAroundLayerBricks'
    [test_isosurface]='IsosurfaceDevice.MatchesCpuBitForBit:IsosurfaceDevice.SlabbedHostPathEqualsOnePass'
  )
  for t in ${WINNOW_SANITIZE_EXTRA:-}; do filter[$t]='*'; done  # more test programs, whole (e.g. a new capability's)
  for tool in ${WINNOW_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
    for t in test_compact test_label test_label_volume_device test_isosurface test_puzzle test_histopyramid ${WINNOW_SANITIZE_EXTRA:-}; do
      log="$logs/sanitize-$tool-$t.log"
      f=${filter[$t]}
      [ "$tool" = racecheck ] && [ -n "${race_filter[$t]:-}" ] && f=${race_filter[$t]}
      start=$SECONDS
      timeout "${WINNOW_SANITIZE_TIMEOUT:-900}" "$cs" --tool "$tool" --error-exitcode 99 "$build/tests/$t" --gtest_filter="$f" > "$log" 2>&1
      rc=$?
      tests=$(grep -E '^\[  PASSED  \]' "$log" | tail -1)
      printf '%-10s %-13s exit %-3s %4ss  %s  %s\n' "$tool" "$t" "$rc" $((SECONDS - start)) \
        "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" "$tests"
      [ "$rc" -eq 0 ] || status=1
    done
  done
fi

bench() {  # name, command...
  local name=$1; shift
  step "benchmark: $name"
  if ! "$@" > "$logs/bench-$name.log" 2>&1; then
    echo "FAILED: $*"; tail -20 "$logs/bench-$name.log"; status=1
  fi
}
want compact && bench compact "$build/bench/bench_compact_gpu" --markdown
want histopyramid && bench histopyramid "$build/bench/bench_histopyramid_gpu"
want isosurface && bench isosurface "$build/bench/bench_isosurface_gpu" ${WINNOW_ISOSURFACE_BENCH_ARGS:-}
# Both labeling programs take the same number of timed repetitions.
label_reps=20
want label && bench label "$build/bench/bench_label_gpu" --reps "$label_reps" --dump "$build/label-masks"
# Peers on the same masks: cupyx.scipy.ndimage.label and OpenCV (16 threads); real images first.
# Its summary divides cupyx's times by winnow's from the label step's log.
want peers && bench label-peers timeout 400 python3 bench/label_peers.py --reps "$label_reps" --threads 16 \
  --dump "$build/label-masks" --ours "$logs/bench-label.log"
# Volumes: winnow's device API (labels, and labels + statistics) beside the copy floor, the
# 256^3 cases checked against the BFS oracle; then cupyx, cuCIM and cc3d (when importable, one
# timed run each on the CPU) on the same volumes.
want label3d && bench label3d "$build/bench/bench_label_volume_gpu" --reps "$label_reps"
want label3d && bench label3d-peers timeout 500 python3 bench/label_volume_peers.py --reps "$label_reps" --cpu-reps 1 --stats
want puzzle && bench puzzle "$build/bench/puzzle_bench" --measures mgc

# What a CLI user sees (one process per call, so every CUDA run pays the device's start): `winnow
# label` on random density-0.5 masks with each backend; the summary's stages (device start,
# transfers, labeling) are the measurements behind `automatic`'s choice (src/label/label.cpp).
if want cli; then
  step "cli: winnow label, one process per call"
  mkdir -p "$build/cli-masks"
  python3 - "$build/cli-masks" <<'PY' > /dev/null || status=1
import sys, numpy as np, cv2
rng = np.random.default_rng(7)
for side in (1024, 4096, 8192, 16384):
    cv2.imwrite(f"{sys.argv[1]}/random_{side}.png", ((rng.random((side, side)) < 0.5) * 255).astype(np.uint8))
PY
  for side in 1024 4096 8192 16384; do
    for backend in cpu cuda auto; do
      "$build/apps/winnow/winnow" label "$build/cli-masks/random_$side.png" --threshold 127 --backend $backend
    done
  done > "$logs/bench-cli.log" 2>&1 || status=1
  cat "$logs/bench-cli.log"
fi

step "summary"
printf '%s\n' "device: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" \
  "commit: ${WINNOW_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" "date: $(date -u +%F)"
if [ -f "$logs/ctest.log" ]; then  # CTest's "N% tests passed" counts skipped tests among the passed
  total=$(grep -oE 'out of [0-9]+' "$logs/ctest.log" | tail -1 | grep -oE '[0-9]+')
  failed=$(grep -oE '[0-9]+ tests failed' "$logs/ctest.log" | tail -1 | grep -oE '^[0-9]+')
  skipped=$(grep -c '(Skipped)' "$logs/ctest.log")
  failed=${failed:-0}
  echo "ctest: $((total - failed - skipped)) passed, $skipped skipped, $failed failed (of $total)"
fi
for f in "$logs"/sanitize-*.log; do
  [ -f "$f" ] && printf '%s: %s\n' "$(basename "$f" .log)" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
done
[ -f "$logs/large.log" ] && grep -E '^\[ +(PASSED|FAILED) +\]' "$logs/large.log" | sed 's/^/large tests: /'
for f in "$logs"/bench-*.log; do
  [ -f "$f" ] || continue
  echo
  echo "-- $(basename "$f" .log)"
  # A benchmark's summary table is what follows its '## summary' line, else its last lines.
  if grep -q '^## summary' "$f"; then sed -n '/^## summary/,$p' "$f" | tail -n +2; else tail -n 25 "$f"; fi
done
exit $status
