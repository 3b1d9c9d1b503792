#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, the library under AddressSanitizer +
# UndefinedBehaviorSanitizer, and runs each for SECONDS (default 60) on a corpus seeded from the
# bundled images and volumes; new inputs are kept in build-fuzz/corpus/<target>, crashes in
# build-fuzz/crashes/<target>. Each target has a dictionary of its formats' magic words (fuzz/*.dict).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (targets: fuzz_image fuzz_volume)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ $# -gt 0 ] || targets=(fuzz_image fuzz_volume)
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWINNOW_WITH_CUDA=OFF \
  -DWINNOW_BUILD_APPS=OFF -DWINNOW_BUILD_TESTS=OFF -DWINNOW_BUILD_BENCH=OFF -DWINNOW_BUILD_FUZZ=ON \
  -DWINNOW_SANITIZE=fuzzer-no-link,address,undefined > /dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t" crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  case $t in
    fuzz_image) cp -n examples/data/*.png examples/data/*.jpg examples/data/*.fits "$corpus/" 2>/dev/null || true ;;
    fuzz_volume) cp -n examples/data/volumes/* "$corpus/" 2>/dev/null || true ;;
  esac
  echo "== $t, $seconds s"
  dict=fuzz/${t#fuzz_}.dict
  "$build/fuzz/$t" "$corpus" -dict="$dict" -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=4194304 \
    -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | grep -E '^#[0-9]+.*DONE|stat::|ERROR|SUMMARY' || status=1
done
exit $status
