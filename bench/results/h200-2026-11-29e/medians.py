import sys, re, statistics, collections
# usage: med.py label.log -> medians per variant/case/conn: labels, with stats, local, merge, labelphase, stats phase
d = collections.defaultdict(list)
v = None; case = None
for line in open(sys.argv[1]):
    if line.startswith('== '): v = line.split()[1]; continue
    m = re.match(r'^(random_\S+|mni\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)', line)
    if m: case = (m.group(1), int(m.group(2))); lab, st = float(m.group(3)), float(m.group(4)); continue
    m = re.search(r'phases ms: local ([\d.]+) merge ([\d.]+) scan ([\d.]+) labels ([\d.]+) stats ([\d.]+)', line)
    if m and case:
        d[(v,)+case].append((lab, st) + tuple(float(x) for x in m.groups()))
out = {}
for k, rows in d.items():
    out[k] = [statistics.median(c) for c in zip(*rows)] + [len(rows)]
import json
json.dump({'|'.join(map(str,k)): val for k, val in out.items()}, open(sys.argv[2], 'w'))
for k in sorted(out, key=lambda k: (k[1], k[2], k[0])):
    m = out[k]
    print(f"{k[0]:4s} {k[1]:16s} {k[2]:2d} labels {m[0]:.3f} stats {m[1]:.3f} | local {m[2]:.3f} merge {m[3]:.3f} scan {m[4]:.3f} lab {m[5]:.3f} st {m[6]:.3f} n={m[7]}")
