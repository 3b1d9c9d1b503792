#!/usr/bin/env bash
# Template for a device call (one GPU), not run: where the 6-connected local pass (bits_local_kernel
# <6>) spends its warp instructions, line by line, at 512^3 d0.5. A -lineinfo build, one profiled
# launch with the source counters, then the report's source page as CSV (CUDA lines; the SASS
# view as well, where the CUDA lines fold inlined helpers together). Copy to .ab/ and run there.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWINNOW_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS=-lineinfo"
cmake -S . -B /tmp/bl $cfg > /tmp/bl.log 2>&1 && cmake --build /tmp/bl -j16 --target bench_label_volume_gpu >> /tmp/bl.log 2>&1
echo "build exit $? after $((SECONDS - start)) s" >> "$S"
timeout 120 ncu --section SourceCounters --section WarpStateStats --import-source yes -k regex:bits_local -c 1 \
  -o /tmp/local6 /tmp/bl/bench/bench_label_volume_gpu --case random_512_d0.5 --conn 6 --reps 1 > /tmp/ncu.log 2>&1
echo "ncu exit $? after $((SECONDS - start)) s" >> "$S"; tail -5 /tmp/ncu.log >> "$S"
ncu -i /tmp/local6.ncu-rep --page source --print-source cuda --csv > "$OUT/local6-cuda.csv" 2>> "$S"
ncu -i /tmp/local6.ncu-rep --page source --print-source sass --csv > "$OUT/local6-sass.csv" 2>> "$S"
ncu -i /tmp/local6.ncu-rep --page details > "$OUT/local6-details.txt" 2>> "$S"
ls -la "$OUT" >> "$S"; cat "$S"
