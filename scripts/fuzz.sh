#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, the library under AddressSanitizer +
# UndefinedBehaviorSanitizer, and runs each for SECONDS (default 60), one after the other, on a
# corpus seeded by fuzz_make_seeds (small files written by the library's own writers); new inputs
# are kept in $BUILD/corpus/<target>, crashes in $BUILD/crashes/<target>. Each target has a
# dictionary of its format's magic words or its keys (fuzz/*.dict).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: every target below)
#   WINNOW_FUZZ_BUILD=DIR   build folder (default build-fuzz)
#   WINNOW_FUZZ_NICE=N      run the fuzzers at this niceness (default 0; 19 on a shared machine)
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(fuzz_png fuzz_jpeg fuzz_tiff fuzz_fits fuzz_image fuzz_nifti fuzz_nrrd fuzz_npy fuzz_tiff_stack
             fuzz_volume fuzz_json fuzz_cli_args)
seconds=${1:-60}
shift || true
targets=("$@")
[ $# -gt 0 ] || targets=("${all_targets[@]}")
build=${WINNOW_FUZZ_BUILD:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWINNOW_WITH_CUDA=OFF \
  -DWINNOW_BUILD_APPS=ON -DWINNOW_BUILD_TESTS=OFF -DWINNOW_BUILD_BENCH=OFF -DWINNOW_BUILD_PYTHON=OFF \
  -DWINNOW_BUILD_FUZZ=ON -DWINNOW_SANITIZE=fuzzer-no-link,address,undefined > /dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target fuzz_make_seeds "${targets[@]}"
"$build/fuzz/fuzz_make_seeds" "$build/seeds"
status=0
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  case $name in
    png|jpeg|tiff|fits|image) dict=fuzz/image.dict ;;
    nifti|nrrd|npy|tiff_stack|volume) dict=fuzz/volume.dict ;;
    json) dict=fuzz/json.dict ;;
    cli_args) dict=fuzz/cli_args.dict ;;
    *) echo "fuzz.sh: unknown target $t" >&2; exit 2 ;;
  esac
  corpus="$build/corpus/$t" crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  cp -n "$build/seeds/$name"/* "$corpus/"
  echo "== $t, $seconds s"
  # -max_len: the seeds are under 6 KB; 64 KB leaves room to grow without slowing every run.
  nice -n "${WINNOW_FUZZ_NICE:-0}" "$build/fuzz/$t" "$corpus" -dict="$dict" -max_total_time="$seconds" \
    -rss_limit_mb=4096 -max_len=65536 -timeout=60 -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 |
    grep -E '^#[0-9]+.*(DONE|INITED)|stat::|ERROR|SUMMARY|Test unit written' || true
  # libFuzzer leaves a crash-*, oom-*, timeout-* or leak-* file for every finding.
  if compgen -G "$crashes/*" > /dev/null; then
    echo "fuzz.sh: $t has findings in $crashes" >&2
    status=1
  fi
done
exit $status
