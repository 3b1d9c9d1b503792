#!/usr/bin/env bash
# Call 72: h = a7bcfd6 + call71-h-merge-halves.diff (committed as 43921dc with a comment);
# q = h + the x boundary in the merge's stream + the roots walked where the run forest is written
# (call72-q-halves-x-boundary-in-stream-root-walks.diff, against a7bcfd6).
# Binaries built on the development machine (ninja -C build bench/bench_label_volume_gpu and the four
# label test binaries; nvcc 13.0, sm_90, Release), stripped, packed as .ab/binsNN.txz; run on the
# device as 'bash .ab/callNN.sh' with carry [.ab, .deps/debs] (.ab/med.py = medians.py here).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins72.txz
for f in /tmp/b/*/*; do ldd "$f" | grep -q "not found" && echo "missing libraries: $f" >> "$S"; done
export WINNOW_REQUIRE_GPU=1
T="$OUT/tests.log"
for v in h q; do
  for t in test_label_volume_device test_label_volume test_label_statistics test_label_chunks; do
    [ -x /tmp/b/$v/$t ] || continue
    filter=""; [ $t = test_label ] && filter="--gtest_filter=-LabelCli.*"  # the CLI is not carried
    echo "== $v $t" >> "$T"; timeout 90 /tmp/b/$v/$t $filter > /tmp/t.log 2>&1; echo "exit $?" >> "$T"
    grep -E "FAILED|^\[  PASSED|Failure|SKIPPED" /tmp/t.log | head -8 >> "$T"
  done
done
echo "tests done after $((SECONDS - start)) s" >> "$S"
M="$OUT/sanitizers.log"
for v in h q; do
  timeout 50 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/b/$v/test_label_volume_device --gtest_filter='*EveryConnectivity*:*Stats*:*EmptyFull*' > /tmp/m.log 2>&1
  echo "memcheck $v exit $?" >> "$M"; tail -2 /tmp/m.log >> "$M"
  timeout 50 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/b/$v/test_label_volume_device --gtest_filter='*EveryConnectivity*:*EdgeAndCorner*:*Stats*:*EmptyFull*' > /tmp/r.log 2>&1
  echo "racecheck $v exit $?" >> "$M"; grep -E "Warning|Error|access at" /tmp/r.log | sort | uniq -c | sort -rn | head -8 >> "$M"; tail -2 /tmp/r.log >> "$M"
done
echo "sanitizers done after $((SECONDS - start)) s" >> "$S"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/label_volume_peers.py --no-cpu --reps 10 > "$OUT/peers.log" 2>&1
echo "peers exit $? after $((SECONDS - start)) s" >> "$S"
L="$OUT/label.log"
for round in 1 2 3 4; do
  for v in h q; do
    echo "== $v" >> "$L"; timeout 40 /tmp/b/$v/bench_label_volume_gpu --reps 10 --breakdown >> "$L" 2>&1
  done
  echo "round $round after $((SECONDS - start)) s" >> "$S"
  [ $((SECONDS - start)) -gt 330 ] && break
done
awk '/^== /{v=$2} /^(random|mni)/{c=$1" "$2" "$3" "$4} /phases/{print v, c, "local", $4, "merge", $6, "labels", $10, "stats", $12}' "$L" | sort -k2,3 -s | grep mni
cat "$M" "$T" "$S"
python3 .ab/med.py "$L" "$OUT/medians.json" > "$OUT/medians.txt" 2>&1; cat "$OUT/medians.txt"
