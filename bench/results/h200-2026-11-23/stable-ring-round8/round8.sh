#!/usr/bin/env bash
# Round 8: stable ring (tiles from a counter, non-waiting look-back). Build, tests with the stable
# ring forced for every stable aligned compaction, then the single_pass sweep.
set -uo pipefail
source scripts/device-env.sh
export WINNOW_REQUIRE_GPU=1
b=build-gpu
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
t0=$(date +%s)
cmake --build $b -j 16 --target test_compact bench_compact_gpu > $OUT/build.log 2>&1 || { grep -E "error" $OUT/build.log | head -30; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
WINNOW_STABLE_RING=1 timeout 200 $b/tests/test_compact --gtest_filter="CompactDevice.*:Variants/*cuda_single_pass*" > $OUT/test-stable-ring.log 2>&1; echo "tests rc=$?"
WINNOW_STABLE_RING=1 WINNOW_STABLE_RING_SPILL_ALL=1 timeout 200 $b/tests/test_compact --gtest_filter="CompactDevice.*:Variants/*cuda_single_pass*" > $OUT/test-stable-ring-spill.log 2>&1; echo "spill tests rc=$?"
grep -E "PASSED|FAILED|tests ran" $OUT/test-stable-ring*.log | tail -15
timeout 240 $b/bench/bench_compact_gpu --sweep-stable > $OUT/sweep.log 2>&1; echo "sweep rc=$?"
grep -E "^2\^28" $OUT/sweep.log | grep -v "block_ballot"
grep -iE "mismatch|differ|error" $OUT/sweep.log | head
WINNOW_STABLE_RING_REPORT=1 timeout 200 $b/bench/bench_compact_gpu --sweep-stable > $OUT/sweep-report.log 2> $OUT/spill-report.log; echo "report rc=$?"
awk '/spill report/{k=$4" "$6" "$8; c[k]++; s[k]+=$12/$10; if(!(k in mx)||$12/$10>mx[k])mx[k]=$12/$10} END{for(k in c) printf "stages tile_bytes n = %s: launches %d, spilled fraction mean %.4f max %.4f\n", k, c[k], s[k]/c[k], mx[k]}' $OUT/spill-report.log | sort
