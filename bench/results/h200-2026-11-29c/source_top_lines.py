"""The CUDA source lines of an ncu source page (`ncu -i R --page source --print-source cuda,sass --csv`,
gzipped) ranked by one metric: 0 stall samples, 1 instructions executed, 2 excessive L2 sectors,
3 excessive shared wavefronts. Usage: source_top_lines.py PAGE.csv.gz [METRIC] [LINES]."""
import csv, gzip, sys
rows = list(csv.reader(gzip.open(sys.argv[1], 'rt')))
file = None; out = []; header = None
for r in rows:
    if not r: continue
    if r[0] == "File Path": file = r[1].split('/')[-1]; continue
    if r[0] == "Line No": header = r; continue
    if r[0] in ("Function Name",) : continue
    if header and r[0] and r[0] != "":
        d = dict(zip(header[4:], r[4:]))
        def num(k):
            try: return float(d.get(k, '0').replace(',', ''))
            except: return 0.0
        out.append((num("Warp Stall Sampling (All Samples)"), num("Instructions Executed"), num("L2 Theoretical Sectors Global Excessive"), num("L1 Wavefronts Shared Excessive"), file, r[0], r[1].strip()[:90]))
if '--cols' in sys.argv: print(header); sys.exit()
tot = [sum(o[i] for o in out) for i in range(4)]
print("total stall samples %d, inst %d, L2 excess sectors %d, shared excess %d" % tuple(tot))
key = int(sys.argv[2]) if len(sys.argv) > 2 else 0
for o in sorted(out, key=lambda o: -o[key])[:int(sys.argv[3]) if len(sys.argv) > 3 else 25]:
    print("%5.1f%% %5.1f%% %5.1f%% %5.1f%%  %s:%s  %s" % (100*o[0]/max(tot[0],1), 100*o[1]/max(tot[1],1), 100*o[2]/max(tot[2],1), 100*o[3]/max(tot[3],1), o[4], o[5], o[6]))
