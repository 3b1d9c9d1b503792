#!/usr/bin/env bash
# Call 68: source-level ncu profiles (HEAD a038900's label_volume.cu built with -lineinfo, the same
# code) of the kernels that keep the target short: the statistics in passes at 512^3 density 0.1
# 6-connected, the one-pass statistics at 256^3 density 0.1 26-connected, and the MRI's 6-connected
# local and label passes. Per CUDA line: instructions executed, stall samples.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins68.txz
B=/tmp/b/bench_label_volume_gpu
sections="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats"
D="$OUT/details.txt"
prof() {  # name case conn mangled-kernel-regex
  local name=$1 case=$2 conn=$3 re=$4
  timeout 90 ncu $sections --import-source yes --kernel-name-base mangled -k regex:"$re" -c 1 -o /tmp/$name $B --reps 1 --case $case --conn $conn > /tmp/ncu.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  echo "=== $name" >> "$D"; ncu -i /tmp/$name.ncu-rep --page details >> "$D" 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --print-source cuda --csv 2>> "$S" | gzip > "$OUT/$name-source.csv.gz"
}
prof r512d01-6-stats-passes random_512_d0.1 6 'brick_stats_kernel.*Lb1ELb1E'
prof r256d01-26-stats random_256_d0.1 26 'brick_stats_kernel.*Lb1ELb0E'
prof mri6-local mni152 6 'bits_local_kernelIhLi6E'
prof mri6-labels mni152 6 'bits_labels_kernel'
grep -E "^=== |^  [a-z_ ]*[a-z]+>::|^\s+(Duration|Executed Instructions  )" "$D" | cut -c1-110
for f in "$OUT"/*-source.csv.gz; do echo "$f $(zcat $f | wc -l)"; done
cat "$S"
