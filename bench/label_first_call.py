#!/usr/bin/env python3
"""A process's first CPU volume labeling (fresh memory, as a new user's script or a Dask chunk sees
it) against cc3d's first call, and the same work on memory already used (median of later calls).

    python bench/label_first_call.py [--size 512] [--threads 1,2] [--chunk 128]

Each measurement runs in a fresh child process: a random size^3 mask (density 0.3, seed 1, made
slice by slice, as a volume read from a file arrives), 26-connectivity. Rows: winnow's first call
and the median of the next 4 (labels freed between calls); cc3d's first call (one thread); winnow
on the size/chunk^3 chunks of the same volume with every chunk's labels kept (Dask's pattern), per
chunk. Prints which winnow it imported.
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
import numpy as np
size, kind, chunk = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(1)
vol = np.empty((size, size, size), bool)
for z in range(size):  # slice by slice: a large temporary freed just before the call would lend it warm pages
    vol[z] = rng.random((size, size), dtype=np.float32) < 0.3
if kind == "cc3d":
    import cc3d
    t = time.perf_counter(); cc3d.connected_components(vol, connectivity=26)
    print(json.dumps({"first": (time.perf_counter() - t) * 1e3}))
    sys.exit()
import winnow
if kind == "whole":
    times = []
    for _ in range(5):
        t = time.perf_counter(); r = winnow.label(vol, 26); times.append((time.perf_counter() - t) * 1e3); del r
    print(json.dumps({"first": times[0], "median_later": statistics.median(times[1:]), "winnow": winnow.__file__}))
else:
    kept, n = [], size // chunk
    t = time.perf_counter()
    for z in range(n):
        for y in range(n):
            for x in range(n):
                kept.append(winnow.label(vol[z*chunk:(z+1)*chunk, y*chunk:(y+1)*chunk, x*chunk:(x+1)*chunk], 26))
    print(json.dumps({"per_chunk": (time.perf_counter() - t) * 1e3 / n**3}))
"""


def child(size, kind, chunk, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", CHILD, str(size), kind, str(chunk)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--chunk", type=int, default=128)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, random {args.size}^3 d0.3, 26-connectivity")
    print(f"cc3d first call (1 thread): {child(args.size, 'cc3d', args.chunk, 1)['first']:.0f} ms", flush=True)
    for threads in (int(t) for t in args.threads.split(",")):
        whole = child(args.size, "whole", args.chunk, threads)
        chunks = child(args.size, "chunks", args.chunk, threads)
        print(f"{threads} thread(s): winnow first call {whole['first']:.0f} ms, later calls (median) "
              f"{whole['median_later']:.0f} ms; {args.chunk}^3 chunks kept {chunks['per_chunk']:.1f} ms each "
              f"({whole['winnow']})", flush=True)


if __name__ == "__main__":
    main()
