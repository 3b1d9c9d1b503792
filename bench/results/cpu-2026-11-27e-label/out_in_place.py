"""winnow.label of the MNI152 volume tiled to 256^3 (four classes, multi-label; > 128, binary),
26-connectivity: into a new array against into the same out= array every call, medians of 11;
run from the repository root with OMP_NUM_THREADS set."""
import sys, time, statistics, numpy as np, os
sys.path.insert(0, "bench")
from label_cpu_peers import read_nifti, tiled, DATA
import winnow
gm = read_nifti(os.path.join(DATA, "volumes", "mni152_gm.nii.gz"))
for name, a in (("mni classes", tiled(gm // 64, 256)), ("mni binary", tiled(gm > 128, 256))):
    out = np.empty(a.shape, np.uint32)
    def med(f, k=11):
        ts=[]
        for _ in range(k):
            t=time.perf_counter(); r=f(); ts.append((time.perf_counter()-t)*1e3); del r
        return round(statistics.median(ts), 2)
    print(name, "fresh", med(lambda: winnow.label(a, 26)), "out=", med(lambda: winnow.label(a, 26, out=out)), "fresh", med(lambda: winnow.label(a, 26)))
