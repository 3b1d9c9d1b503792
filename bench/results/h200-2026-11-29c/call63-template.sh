#!/usr/bin/env bash
# Template for a device call (one GPU), not run: the empty-brick candidate prepared in the
# seventeenth session (next-empty-bricks.diff, compile-checked against 635a16f): a brick of
# background only skips the local pass's forest, the merge, and the statistics' table and sweeps
# (its carry going on to the warp's next brick), and the label pass writes a batch of empty row
# words as zeros without the run arithmetic. Before the call, on the development machine (build/
# at HEAD, sm_90 Release; about a minute a tree on two cores):
#   T="bench/bench_label_volume_gpu tests/test_label_volume_device tests/test_label_volume tests/test_label_statistics tests/test_label_chunks"
#   ninja -C build $T; mkdir -p /tmp/bins/o /tmp/bins/e; cp build/bench/bench_label_volume_gpu /tmp/bins/o/
#   git apply bench/results/h200-2026-11-29b/next-empty-bricks.diff; ninja -C build $T
#   cp build/bench/bench_label_volume_gpu build/tests/test_label_{volume_device,volume,statistics,chunks} /tmp/bins/e/
#   strip -s /tmp/bins/*/*; tar -C /tmp/bins -cJf .ab/bins.txz o e; cp bench/results/h200-2026-11-29b/next-call.sh .ab/
# (the carried tree must stay under 64 MiB with .deps/debs: about 12 MB of binaries fit), then run
# `bash .ab/next-call.sh` with carry [".ab", ".deps/debs"]. Expect the MRI's phases to move (72 % of
# its bricks are empty) and the random volumes' not at all (no brick is empty there): the benchmark
# alternately, three rounds, cupyx in the same run.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins.txz
for f in /tmp/b/*/*; do ldd "$f" | grep -q "not found" && echo "missing libraries: $f" >> "$S"; done
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_volume test_label_statistics test_label_chunks; do
  echo "== e $t" >> "$T"; timeout 90 /tmp/b/e/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -8 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/e/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*:*EmptyFull*' > /tmp/m.log 2>&1
echo "memcheck e exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/e/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*Stats*:*EmptyFull*' > /tmp/r.log 2>&1
echo "racecheck e exit $?" >> "$M"; grep -E "Warning|Error|access at" /tmp/r.log | sort | uniq -c | sort -rn | head -8 >> "$M"; tail -2 /tmp/r.log >> "$M"
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in o e; do
    echo "== $v" >> "$L"; timeout 40 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 400 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s | grep mni
cat "$M" "$T" "$S"
