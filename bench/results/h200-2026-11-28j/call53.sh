#!/usr/bin/env bash
# Call 53: the committed candidate's binaries, built on the development machine (its nvcc 13.0,
# sm_90, Release) from the working tree whose kernels match calls 50 and 52 instruction for
# instruction: the volume label tests with the GPU required, memcheck, cupyx, then the benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/bin && tar -C /tmp/bin -xzf .ab/bins.tgz
ldd /tmp/bin/bench_label_volume_gpu | grep "not found" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_statistics; do
  echo "== $t" >> "$T"; timeout 60 /tmp/bin/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -8 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bin/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*' > /tmp/m.log 2>&1
echo "memcheck exit $?" >> "$T"; tail -1 /tmp/m.log >> "$T"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  echo "== c" >> "$L"; timeout 30 /tmp/bin/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 100 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$T" "$S" "$OUT/peers.log"
