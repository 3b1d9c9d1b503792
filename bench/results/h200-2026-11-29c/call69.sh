#!/usr/bin/env bash
# Call 69: call 68's two statistics profiles again, their source pages printed as SASS with metrics
# (and SASS beside CUDA lines) instead of CUDA lines alone (which came back without metrics).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1; ncu --version >> "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins68.txz
B=/tmp/b/bench_label_volume_gpu
sections="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats"
prof() {  # name case conn mangled-kernel-regex
  local name=$1 case=$2 conn=$3 re=$4
  timeout 90 ncu $sections --import-source yes --kernel-name-base mangled -k regex:"$re" -c 1 -o /tmp/$name $B --reps 1 --case $case --conn $conn > /tmp/ncu.log 2>&1
  echo "ncu $name exit $? after $((SECONDS - start)) s" >> "$S"
  ncu -i /tmp/$name.ncu-rep --page source --print-source sass --csv 2>> "$S" | gzip > "$OUT/$name-sass.csv.gz"
  ncu -i /tmp/$name.ncu-rep --page source --print-source cuda,sass --csv 2>> "$S" | gzip > "$OUT/$name-cuda-sass.csv.gz"
  ls -la /tmp/$name.ncu-rep >> "$S"
}
prof r512d01-6-stats-passes random_512_d0.1 6 'brick_stats_kernel.*Lb1ELb1E'
prof r256d01-26-stats random_256_d0.1 26 'brick_stats_kernel.*Lb1ELb0E'
for f in "$OUT"/*.csv.gz; do echo "$f $(zcat $f | wc -l)"; zcat $f | sed -n 1,2p | cut -c1-400; done
cat "$S"
