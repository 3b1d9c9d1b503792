#!/usr/bin/env bash
# Call 66: ncu profiles of HEAD a038900's statistics kernels (init_records, brick_stats) where the
# statistics phase is largest against the labels: 512^3 density 0.1 6-connected (9.4 M components,
# 0.74 of 1.65 ms) and 256^3 density 0.1 26-connected (the one 26-connected case under 10x).
# Binary built on the development machine (nvcc 13.0, sm_90, Release).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins66.txz
B=/tmp/b/bench_label_volume_gpu
sections="--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats"
prof() {  # name case conn kernel-regex [extra sections]
  local name=$1 case=$2 conn=$3 re=$4; shift 4
  timeout 90 ncu $sections "$@" -k regex:"$re" -c 1 -o /tmp/$name $B --reps 1 --case $case --conn $conn > /tmp/ncu.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i /tmp/$name.ncu-rep --page details > "$OUT/$name-details.txt" 2>&1
}
prof r512d01-6-stats random_512_d0.1 6 brick_stats --section SourceCounters --import-source yes
prof r512d01-6-init random_512_d0.1 6 init_records
prof r256d01-26-stats random_256_d0.1 26 brick_stats --section SourceCounters --import-source yes
prof r256d01-26-init random_256_d0.1 26 init_records
for n in r512d01-6-stats r256d01-26-stats; do
  ncu -i /tmp/$n.ncu-rep --page source --print-source cuda --csv 2>> "$S" | gzip > "$OUT/$n-source-cuda.csv.gz"
done
grep -HE "^\s+(Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Executed Instructions  |Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Grid Size|Block Size)" "$OUT"/*-details.txt | sed "s@$OUT/@@" | head -80
cat "$S"
