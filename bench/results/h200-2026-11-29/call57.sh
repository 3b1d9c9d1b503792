#!/usr/bin/env bash
# Call 57: binaries built on the development machine (nvcc 13.0, sm_90, Release): n = the 6-connected
# local pass with the surplus stretches dealt from a warp pool, o = HEAD d4739f8. Tests of n with the
# GPU required, racecheck, then the benchmark's 6-connected cases alternately.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xzf .ab/bins57.tgz
ldd /tmp/b/n/bench_label_volume_gpu | grep "not found" >> "$S"
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for t in test_label_volume_device test_label_volume; do
  echo "== n $t" >> "$T"; timeout 60 /tmp/b/n/$t > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
  grep -E "FAILED|^\[  PASSED|Failure" /tmp/t.log | head -8 >> "$T"
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
timeout 30 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/n/test_label_volume_device --gtest_filter='*EveryConnectivity*' > /tmp/r.log 2>&1
echo "racecheck exit $?" >> "$T"; tail -1 /tmp/r.log >> "$T"
echo "sanitizer done after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3; do
  for v in n o; do
    echo "== $v" >> "$L"; timeout 25 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown --conn 6 >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 100 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s
cat "$T" "$S"
