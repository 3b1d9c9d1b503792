#!/usr/bin/env bash
# Device call 41 (one GPU): profiles of c217018's volume labeling kernels for the next designs:
# 6-connectivity's local pass and merge at 512^3 d0.5, the statistics at 256^3 d0.1 26 and 512^3
# d0.1 6, the label pass on the MRI; ncu sections and the warp stall reasons.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF"
cmake -S . -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j16 --target bench_label_volume_gpu >> /tmp/bn.log 2>&1; echo "build exit $? after $((SECONDS - start)) s" >> "$S"
N="$OUT/ncu.log"
prof() {  # case conn kernel-regex launches
  [ $((SECONDS - start)) -gt 215 ] && { echo "skipped $1 $2 $3 (time)" >> "$S"; return; }
  echo "== $1 $2 $3" >> "$N"
  timeout 40 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum \
    -k regex:"$3" -c $4 /tmp/bn/bench/bench_label_volume_gpu --case $1 --conn $2 --reps 1 2>&1 | grep -vE "^\s*$|^  *----|WRN|OPT|Estimated|speedup|The |This |Check |consider|See the" | sed 's/(winnow::detail.*//' >> "$N"
  echo "profiled $1 $2 $3 after $((SECONDS - start)) s" >> "$S"
}
prof random_512_d0.5 6 "bits_local|bits_merge" 2
prof random_256_d0.1 26 "brick_stats" 1
prof mni152 26 "bits_labels" 1
prof random_512_d0.1 6 "brick_stats" 2
cat "$S"
