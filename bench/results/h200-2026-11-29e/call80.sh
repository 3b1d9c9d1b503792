#!/usr/bin/env bash
# Call 80: source-level ncu profiles of the 6-connected kernels that keep the target short, HEAD's
# label_volume.cu (as at 43921dc) built with -lineinfo into bench_label_volume_gpu: the local pass
# at 512^3 density 0.5 and on the tiled MRI, the merge and the label pass at 512^3 density 0.5.
# Per CUDA line (cuda,sass source page): stall samples and instructions executed; ranked here by
# source_top_lines.py (../h200-2026-11-29c/source_top_lines.py, carried as .ab/source_top_lines.py); the
# per-phase shares in results/label.md from phase_shares.py here. Four profiles, four files each:
# the call's eight-file limit kept the 512^3 local and merge pages, taken again while the machine
# was warm (ncu -i of /tmp/*.ncu-rep, tarred). The binary: label_volume.cu compiled by the build's
# own nvcc command with -lineinfo added, put into a copy of libwinnow.a (ar r), the benchmark
# linked against it by the build's link command, stripped, packed as .ab/bins80.txz.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1; ncu --version >> "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins80.txz
B=/tmp/b/bench_label_volume_gpu
sections="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats --section Occupancy"
prof() {  # name case conn mangled-kernel-regex
  local name=$1 case=$2 conn=$3 re=$4
  timeout 100 ncu $sections --import-source yes --kernel-name-base mangled -k regex:"$re" -c 1 -o /tmp/$name $B --reps 1 --case $case --conn $conn > /tmp/ncu.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i /tmp/$name.ncu-rep --page details > "$OUT/$name-details.txt" 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --print-source cuda,sass --csv 2>> "$S" | gzip > "$OUT/$name-cuda-sass.csv.gz"
  python3 .ab/source_top_lines.py "$OUT/$name-cuda-sass.csv.gz" 0 30 > "$OUT/$name-top-lines.txt" 2>&1
  python3 .ab/source_top_lines.py "$OUT/$name-cuda-sass.csv.gz" 1 30 > "$OUT/$name-top-instructions.txt" 2>&1
}
prof r512d05-6-local random_512_d0.5 6 'bits_local_kernelIhLi6E'
prof mri6-local mni152 6 'bits_local_kernelIhLi6E'
prof r512d05-6-merge random_512_d0.5 6 'bits_merge_kernelILi6E'
prof r512d05-6-labels random_512_d0.5 6 'bits_labels_kernel'
head -24 "$OUT"/r512d05-6-local-top-lines.txt
cat "$S"
