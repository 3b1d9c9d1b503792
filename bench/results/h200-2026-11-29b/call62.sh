#!/usr/bin/env bash
# Call 62: profiles for the next designs, no candidate. The benchmark of HEAD 635a16f built on the
# development machine (nvcc 13.0, sm_90, Release, label_volume.cu with -lineinfo). ncu, one launch of
# each kernel: the MRI 6-connected (the label phase's two kernels, the statistics, the merge) and
# 256^3 d0.1 26-connected (the statistics, with source counters; the local pass, the merge, the labels).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins62.txz
B=/tmp/b/bench_label_volume_gpu
sections="--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats"
prof() {  # name case conn kernel-regex [extra sections]
  local name=$1 case=$2 conn=$3 re=$4; shift 4
  timeout 60 ncu $sections "$@" -k regex:"$re" -c 1 -o /tmp/$name $B --reps 1 --case $case --conn $conn > /tmp/ncu.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i /tmp/$name.ncu-rep --page details > "$OUT/$name-details.txt" 2>&1
}
prof mri6-labels mni152 6 bits_labels
prof mri6-resolve mni152 6 resolve_local_roots
prof mri6-stats mni152 6 brick_stats --section SourceCounters --import-source yes
prof mri6-merge mni152 6 bits_merge
prof r256d01-26-stats random_256_d0.1 26 brick_stats --section SourceCounters --import-source yes
prof r256d01-26-local random_256_d0.1 26 bits_local
prof r256d01-26-merge random_256_d0.1 26 bits_merge
prof r256d01-26-labels random_256_d0.1 26 bits_labels
for n in mri6-stats r256d01-26-stats; do
  ncu -i /tmp/$n.ncu-rep --page source --print-source cuda --csv 2>> "$S" | gzip > "$OUT/$n-source-cuda.csv.gz"
done
grep -hE "^\s+(Duration|Registers Per Thread|Achieved Occupancy|Executed Instructions  |Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput)" "$OUT"/*-details.txt | head -80
cat "$S"
