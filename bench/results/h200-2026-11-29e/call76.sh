#!/usr/bin/env bash
# Call 76 (one GPU), HEAD 6f3adc2. Two questions from run AL:
#  1. w = HEAD + call76-w-26-merge-quarters.diff (the 26-connected merge's 22 outside block row
#     pairs in quarters of their columns, up to three a lane; 64 registers and 8 bytes of stack
#     against 40 and 32) against HEAD (o): tests, sanitizers, benchmark alternately (3 rounds).
#  2. Why f (../h200-2026-11-29d/call73-f-roots-by-halving-finds.diff) gains 8 % in the
#     6-connected local pass at 512^3 d0.5 and loses 20 % on the tiled MRI while e
#     (../h200-2026-11-29d/call74-e-roots-by-halving-walks.diff) does neither: ncu of
#     bits_local_kernelIhLi6E on the MRI and at 512^3 d0.5 under f and e.
# Binaries built on the development machine (nvcc 13.0, sm_90, Release): o and w with the four
# label test binaries, f and e the benchmark only; stripped, packed as .ab/bins76.txz (o w f e);
# .ab/med.py = medians.py here. Run as 'bash .ab/call76.sh' with carry [".ab", ".deps/debs"].
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins76.txz
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_volume test_label_statistics test_label_chunks; do
  echo "== w $t" >> "$T"; timeout 90 /tmp/b/w/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -8 >> "$T"
done
M="$OUT/sanitizers.log"
timeout 50 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/w/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*:*EmptyFull*' > /tmp/m.log 2>&1
echo "memcheck w exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
timeout 50 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/w/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*Stats*:*EmptyFull*' > /tmp/r.log 2>&1
echo "racecheck w exit $?" >> "$M"; tail -2 /tmp/r.log >> "$M"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
L="$OUT/label.log"
for round in 1 2 3; do
  for v in o w; do
    echo "== $v" >> "$L"; timeout 40 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
done
sections="--section SpeedOfLight --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
P="$OUT/profiles.txt"
for v in f e; do
  for c in "mni152 6" "random_512_d0.5 6"; do
    set -- $c
    timeout 60 ncu $sections --kernel-name-base mangled -k regex:'bits_local_kernelIhLi6E' -c 1 /tmp/b/$v/bench_label_volume_gpu --reps 1 --case $1 --conn $2 > /tmp/ncu.log 2>&1
    echo "=== $v $c exit $?" >> "$P"; grep -vE "^==PROF==|^\s*$" /tmp/ncu.log | tail -80 >> "$P"
  done
done
echo "profiles done after $((SECONDS - start)) s" >> "$S"
python3 .ab/med.py (= medians.py) "$L" "$OUT/medians.json" > "$OUT/medians.txt" 2>&1; cat "$OUT/medians.txt"
cat "$M" "$T" "$S"
