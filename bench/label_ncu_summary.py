#!/usr/bin/env python3
"""Summarise an ncu CSV (--csv --print-units base) of bench_label_gpu into per-kernel times.

A labeling call starts at its tile pass (local2_kernel / tile_kernel / init_kernel); calls are
grouped by that, tagged +stats when the tile pass or final pass is the statistics variant, and
per case (--calls-per-case consecutive calls) the last call without and with statistics is shown.

    python3 bench/label_ncu_summary.py ncu.csv --cases d0.1,d0.5,d0.9 [--calls-per-case 9]
"""
import argparse
import csv
import re
from collections import OrderedDict

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--cases", default="")
ap.add_argument("--calls-per-case", type=int, default=9)
a = ap.parse_args()

rows = OrderedDict()
with open(a.csv, newline="") as f:
    lines = [l for l in f if l.startswith('"')]
for r in csv.DictReader(lines):
    k = r["ID"]
    e = rows.setdefault(k, {"name": r["Kernel Name"], "m": {}})
    try:
        e["m"][r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    except ValueError:
        pass

def short(n):
    n = n.replace("(anonymous namespace)::", "").replace("<unnamed>::", "").replace("winnow::", "").replace("winnow::detail::cuda::", "")
    if n.startswith("void "):
        n = n[5:]
    n = re.sub(r"\(.*$", "", n)
    return n[:60]

starts = ("local2_kernel", "tile_kernel", "init_kernel")
groups, cur = [], None
for e in rows.values():
    n = short(e["name"])
    if n.startswith(starts):
        cur = []
        groups.append(cur)
    if cur is None:
        continue
    if "DeviceScan" in n or any(n.startswith(s) for s in ("local2", "tile_", "init_", "border", "flatten", "compress",
                                                           "assign", "total", "final", "merge", "labels")):
        cur.append((n, e["m"]))

cases = a.cases.split(",") if a.cases else []
for ci in range(0, len(groups), a.calls_per_case):
    cg = groups[ci:ci + a.calls_per_case]
    name = cases[ci // a.calls_per_case] if ci // a.calls_per_case < len(cases) else f"case{ci // a.calls_per_case}"
    def is_stats(g):
        return any(re.match(r"(local2_kernel<(1|true)[,>]|assign2_kernel<(1|true)>|assign_kernel<2, (1|true)>|final_kernel<2, 4, (1|true)>)", n)
                   for n, _ in g)
    ns = [g for g in cg if not is_stats(g)]
    st = [g for g in cg if is_stats(g)]
    for tag, sel in (("no stats", ns), ("+stats", st)):
        if not sel:
            continue
        g = sel[-1]
        tot = sum(m.get("gpu__time_duration.sum", 0) for _, m in g)
        print(f"== {name} {tag}: {len(g)} kernels, sum {tot / 1e3:.1f} us")
        for n, m in g:
            t = m.get("gpu__time_duration.sum", 0) / 1e3
            rd = m.get("dram__bytes_read.sum", 0) / 1e6
            wr = m.get("dram__bytes_write.sum", 0) / 1e6
            occ = m.get("sm__warps_active.avg.pct_of_peak_sustained_active", 0)
            print(f"  {n:60s} {t:9.1f} us  dram r {rd:8.1f} MB w {wr:8.1f} MB  occ {occ:5.1f}%")
