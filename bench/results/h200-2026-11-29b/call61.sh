#!/usr/bin/env bash
# Call 61: t = test_label (2D labeling, CPU and GPU variants) and the CLI of HEAD d465093 +
# next-shared-halving.diff, built on the development machine without the OpenCV reference (nvcc 13.0,
# sm_90, Release) in /tmp/srch (sources) and /tmp/bnocv (build): both paths are recreated here, the
# sources being this tree (HEAD's). The whole suite with the GPU required, then racecheck of the GPU
# variants of the random and pattern tests.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins61.txz
[ -e /tmp/srch ] || ln -s "$PWD" /tmp/srch
mkdir -p /tmp/bnocv/apps/winnow && cp /tmp/b/t/winnow /tmp/bnocv/apps/winnow/winnow
export WINNOW_REQUIRE_GPU=1
timeout 200 /tmp/b/t/test_label > "$OUT/test_label.log" 2>&1; echo "test_label exit $? after $((SECONDS - start)) s" >> "$S"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/t/test_label --gtest_filter='*RandomDensities/cuda*:*Patterns/cuda*' > /tmp/r2.log 2>&1
echo "racecheck exit $? after $((SECONDS - start)) s" >> "$S"; grep -E "PASSED|FAILED|RACECHECK SUMMARY" /tmp/r2.log >> "$S"
grep -E "FAILED|PASSED|SKIPPED  \]" "$OUT/test_label.log" | head -20
cat "$S"
