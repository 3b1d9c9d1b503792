import csv, gzip, sys, re
def rows(fn):
    header=None; file=None
    for r in csv.reader(gzip.open(fn,'rt')):
        if not r: continue
        if r[0]=="File Path": file=r[1].split('/')[-1]; continue
        if r[0]=="Line No": header=r; continue
        if header and r[0].isdigit():
            d=dict(zip(header[4:], r[4:]))
            f=lambda k: (lambda v: float(v) if v.replace('.','',1).isdigit() else 0.0)(d.get(k,'0').replace(',',''))
            yield file, int(r[0]), f("Warp Stall Sampling (All Samples)"), f("Instructions Executed")
groups = {"load rows (vol->masks)":("volume_local.cuh",380,436),"init forest":("volume_local.cuh",437,449),
 "stretches set-up":("volume_local.cuh",450,475),"union loop (pick, vote)":("volume_local.cuh",476,500),
 "point_at_roots":("volume_local.cuh",283,292),"output (run forest, rows)":("volume_local.cuh",525,570)}
tot=[0,0]; g={k:[0,0] for k in groups}; g["union_find.cuh"]=[0,0]; g["volume_rows.cuh"]=[0,0]; g["other"]=[0,0]
for file,line,st,ins in rows(sys.argv[1]):
    tot[0]+=st; tot[1]+=ins
    for k,(f,a,b) in groups.items():
        if file==f and a<=line<=b: g[k][0]+=st; g[k][1]+=ins; break
    else:
        k = file if file in g else "other"; g[k][0]+=st; g[k][1]+=ins
for k,v in g.items(): print("%-28s stalls %5.1f%%  instructions %5.1f%%" % (k, 100*v[0]/tot[0], 100*v[1]/tot[1]))
