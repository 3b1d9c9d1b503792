#!/usr/bin/env bash
# Call 67: which kernels the statistics phase runs at 512^3 density 0.1 6-connected (call 66's
# first brick_stats launch took 3.65 us), every launch listed with its duration, then the
# statistics kernels' launches profiled (HEAD a038900, the binary of call 66).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
start=$SECONDS
S="$OUT/summary.txt"
nvidia-smi -L > "$S" 2>&1
mkdir -p /tmp/b && tar -C /tmp/b -xJf .ab/bins66.txz
B=/tmp/b/bench_label_volume_gpu
timeout 120 ncu --section SpeedOfLight --metrics gpu__time_duration.sum -c 200 --csv --page raw \
  $B --reps 1 --case random_512_d0.1 --conn 6 > /tmp/list.csv 2> /tmp/list.err
echo "list exit $? after $((SECONDS - start)) s" >> "$S"
python3 - /tmp/list.csv > "$OUT/r512d01-6-launches.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
head = rows[h]; k = head.index("Kernel Name"); t = head.index("gpu__time_duration.sum")
g = head.index("Grid Size") if "Grid Size" in head else None
for r in rows[h + 2:]:
    if len(r) > t: print(r[t], r[g] if g is not None else "", r[k][:150])
PY
tail -3 /tmp/list.err >> "$S"; gzip -c /tmp/list.csv > "$OUT/r512d01-6-launches.csv.gz"
sections="--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats --section SourceCounters"
timeout 150 ncu $sections --import-source yes -k regex:"brick_stats|init_records|accumulate|finish" -c 8 -o /tmp/st $B --reps 1 --case random_512_d0.1 --conn 6 > /tmp/ncu.log 2>&1
echo "ncu stats exit $? after $((SECONDS - start)) s" >> "$S"
ncu -i /tmp/st.ncu-rep --page details > "$OUT/r512d01-6-stats-all-details.txt" 2>&1
ncu -i /tmp/st.ncu-rep --page source --print-source cuda --csv 2>> "$S" | gzip > "$OUT/r512d01-6-stats-all-source.csv.gz"
grep -E "^  [a-z]|^\s+(Duration|Executed Instructions  |DRAM Throughput)" "$OUT/r512d01-6-stats-all-details.txt" | cut -c1-120 | head -60
sort -rn "$OUT/r512d01-6-launches.txt" | head -25
cat "$S"
