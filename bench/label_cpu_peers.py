#!/usr/bin/env python3
"""CPU labeling and flatnonzero against their peers, called from Python on NumPy arrays, the peers
in the same process, alternately:

* volumes: winnow.label against cc3d.connected_components (one thread; it has no others) and,
  with --scipy, scipy.ndimage.label; labels only, NumPy in and out, for 6-, 18- and
  26-connectivity;
* images (--only images): winnow.label against OpenCV's connectedComponentsWithAlgorithm, each of
  its algorithms (SAUF, BBDT, Spaghetti), cv2.setNumThreads(threads), the fastest as the peer;
* flatnonzero (--only flatnonzero): winnow.flatnonzero against numpy.flatnonzero.

Volumes (each side N^3 for N in --sizes):
  random<N>_d<d>   each voxel foreground with probability d (--densities); binary: a bool array;
                   multi-label: uint8 values 1..3 drawn per foreground voxel;
  mni<N>           the bundled MNI152 grey-matter map, tiled and cropped to N^3; binary: > 128;
                   multi-label: the map in four classes (v // 64, 0 background);
  mni<N>_u8        multi-label only: the map's raw uint8 values (256 classes; a "T1 as u8" input);
  motor<N>         the bundled fMRI t-map, tiled and cropped; binary: |t| > 2; multi-label: 1 for
                   t > 2, 2 for t < -2.
Binary input is bool for both libraries (both then take their binary paths); multi-label input
is uint8 with winnow's default multilabel=True (cc3d's rule).

Every thread count runs in a fresh process with OMP_NUM_THREADS set (winnow's threads; cc3d and
NumPy stay on one). In each, every repetition calls each side once in turn, so load from other
processes falls on both; the table gives medians (ms) and the median of the per-repetition ratios
peer / winnow (> 1: winnow faster), and, with more than one thread count, winnow's speed-up over
its one-thread time and the parallel efficiency (speed-up / threads). Each case's labels and count
are checked against cc3d's once (a mismatch is printed and the script exits with status 1).

    python3 bench/label_cpu_peers.py [--sizes 256,384] [--threads 1,2] [--reps 7]
        [--conn 6,18,26] [--densities 0.1,0.3,0.5,0.9] [--kinds binary,multi] [--cases TEXT]
        [--only volumes|images|flatnonzero] [--scipy] [--flat-sizes 1e4,...,1e9]

Needs numpy, cc3d (connected-components-3d), winnow; scipy with --scipy; OpenCV for images.
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data")


def read_nifti(path):
    """A gzipped NIfTI-1 volume (uint8 or float32) as a (z, y, x) array."""
    data = gzip.open(path).read()
    dims = struct.unpack("<8h", data[40:56])
    datatype = struct.unpack("<h", data[70:72])[0]
    dtype = {2: np.uint8, 16: np.float32}[datatype]
    offset = int(struct.unpack("<f", data[108:112])[0])
    nx, ny, nz = dims[1:4]
    return np.frombuffer(data, dtype, count=nx * ny * nz, offset=offset).reshape(nz, ny, nx)


def tiled(vol, n):
    """vol repeated along every axis and cropped to n^3."""
    reps = [-(-n // s) for s in vol.shape]
    return np.ascontiguousarray(np.tile(vol, reps)[:n, :n, :n])


def volume_cases(args, n):
    """(name, binary bool array or None, multi-label uint8 array or None) for one size."""
    rng = np.random.default_rng(n)
    kinds = args.kinds.split(",")
    for d in (float(x) for x in args.densities.split(",")):
        u = rng.random((n, n, n), dtype=np.float32)
        mask = u < d
        multi = None
        if "multi" in kinds:
            multi = (rng.integers(1, 4, (n, n, n), dtype=np.uint8) * mask).astype(np.uint8)
        yield f"random{n}_d{d:g}", mask, multi
        del u, mask, multi
    gm = read_nifti(os.path.join(DATA, "volumes", "mni152_gm.nii.gz"))
    yield f"mni{n}", tiled(gm > 128, n), tiled(gm // 64, n) if "multi" in kinds else None
    if "multi" in kinds:
        yield f"mni{n}_u8", None, tiled(gm, n)
    t = read_nifti(os.path.join(DATA, "volumes", "motor_activation.nii.gz"))
    yield f"motor{n}", tiled(np.abs(t) > 2, n), tiled((t > 2) * np.uint8(1) + (t < -2) * np.uint8(2), n)


def timed(f):
    t = time.perf_counter()
    r = f()
    return (time.perf_counter() - t) * 1e3, r


def alternate(calls, reps):
    """Medians (ms) of each call and the medians of the per-repetition ratios call / calls[0]."""
    ms = {name: [] for name in calls}
    for _ in range(reps):
        for name, f in calls.items():
            t, r = timed(f)
            del r
            ms[name].append(t)
    first = next(iter(calls))
    medians = {name: statistics.median(v) for name, v in ms.items()}
    ratios = {name: statistics.median([b / a for a, b in zip(ms[first], v)]) for name, v in ms.items()}
    return medians, ratios


def child_volumes(args, emit):
    import cc3d
    import winnow
    scipy_label = None
    if args.scipy:
        from scipy import ndimage
        scipy_label = ndimage.label
    structures = {}
    if scipy_label:
        from scipy.ndimage import generate_binary_structure
        structures = {6: generate_binary_structure(3, 1), 18: generate_binary_structure(3, 2),
                      26: generate_binary_structure(3, 3)}
    for n in (int(s) for s in args.sizes.split(",")):
        for name, binary, multi in volume_cases(args, n):
            if args.cases and args.cases not in name:
                continue
            for kind, a in (("binary", binary), ("multi", multi)):
                if a is None or kind not in args.kinds.split(","):
                    continue
                for conn in (int(c) for c in args.conn.split(",")):
                    ours, n_ours = winnow.label(a, conn, return_N=True)
                    theirs, n_theirs = cc3d.connected_components(a, connectivity=conn, return_N=True)
                    same = n_ours == n_theirs and np.array_equal(ours, theirs)
                    del ours, theirs
                    calls = {"winnow": lambda: winnow.label(a, conn),
                             "cc3d": lambda: cc3d.connected_components(a, connectivity=conn)}
                    if scipy_label and kind == "binary":
                        calls["scipy"] = lambda: scipy_label(a, structures[conn])
                    medians, ratios = alternate(calls, args.reps)
                    emit({"what": "volume", "case": name, "kind": kind, "conn": conn, "count": int(n_ours),
                          "same": bool(same), "ms": medians, "ratio": ratios})


def child_images(args, emit):
    import cv2
    import winnow
    cv2.setNumThreads(args.child_threads)
    algorithms = {"sauf": cv2.CCL_SAUF, "bbdt": cv2.CCL_BBDT, "spaghetti": cv2.CCL_SPAGHETTI}
    for f in ("coins.png", "text.png", "hubble_deep_field.jpg", "astronaut.png", "chelsea.png"):
        name = f.split(".")[0]
        if args.cases and args.cases not in name:
            continue
        grey = cv2.imread(os.path.join(DATA, f), cv2.IMREAD_GRAYSCALE)
        _, m = cv2.threshold(grey, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        mask = m.astype(bool)
        for conn in (8, 4):
            ours, n_ours = winnow.label(mask, conn, return_N=True)
            n_cv, cv_labels = cv2.connectedComponentsWithAlgorithm(m, conn, cv2.CV_32S, cv2.CCL_SAUF)
            same = n_ours == n_cv - 1 and np.array_equal(ours, cv_labels)
            calls = {"winnow": lambda: winnow.label(mask, conn)}
            for alg, code in algorithms.items():
                calls["opencv_" + alg] = (lambda code=code: cv2.connectedComponentsWithAlgorithm(m, conn, cv2.CV_32S, code))
            medians, ratios = alternate(calls, args.reps)
            best = min((k for k in medians if k != "winnow"), key=lambda k: medians[k])
            emit({"what": "image", "case": f"{name} {m.shape[1]}x{m.shape[0]}", "kind": "binary", "conn": conn,
                  "count": int(n_ours), "same": bool(same), "ms": {"winnow": medians["winnow"], "opencv": medians[best]},
                  "ratio": {"winnow": 1.0, "opencv": ratios[best]}, "peer": best})


def child_flatnonzero(args, emit):
    import winnow
    rng = np.random.default_rng(7)
    for size in (int(float(s)) for s in args.flat_sizes.split(",")):
        for d in (0.1, 0.5):
            a = np.empty(size, bool)
            step = 1 << 26
            for i in range(0, size, step):  # in chunks: no float array of the whole size
                a[i:i + step] = rng.integers(0, 256, min(step, size - i), dtype=np.uint8) < int(d * 256)
            same = np.array_equal(winnow.flatnonzero(a), np.flatnonzero(a))
            reps = max(3, min(args.reps * 4, int(2e8 // size) + 3))
            medians, ratios = alternate({"winnow": lambda: winnow.flatnonzero(a), "numpy": lambda: np.flatnonzero(a)},
                                        reps)
            emit({"what": "flatnonzero", "case": f"{size:.0e} bool d{d:g}", "kind": "-", "conn": 0,
                  "count": int(np.count_nonzero(a)), "same": bool(same), "ms": medians, "ratio": ratios})
            del a


def child(args):
    def emit(record):
        record["threads"] = args.child_threads
        print("@@" + json.dumps(record), flush=True)

    {"volumes": child_volumes, "images": child_images, "flatnonzero": child_flatnonzero}[args.only](args, emit)


def table(records, threads):
    peers = sorted({p for r in records for p in r["ms"] if p != "winnow"})
    lines = []
    head = "| case | kind | conn | threads | count | winnow ms |" + "".join(f" {p} ms | {p} / winnow |" for p in peers)
    lines.append(head)
    lines.append("|" + "---|" * (head.count("|") - 1))
    for r in records:
        cells = [r["case"], r["kind"], str(r["conn"]) if r["conn"] else "-", str(r["threads"]), str(r["count"]),
                 f"{r['ms']['winnow']:.2f}"]
        for p in peers:
            if p in r["ms"]:
                cells += [f"{r['ms'][p]:.2f}", f"**{r['ratio'][p]:.2f}x**"]
            else:
                cells += ["", ""]
        lines.append("| " + " | ".join(cells) + " |" + ("" if r["same"] else "  LABELS DIFFER"))
    if len(threads) > 1:
        one = {(r["case"], r["kind"], r["conn"]): r["ms"]["winnow"] for r in records if r["threads"] == threads[0]}
        lines.append("")
        lines.append(f"| case | kind | conn | " + " | ".join(f"{t} threads: speed-up, efficiency" for t in threads[1:]) + " |")
        lines.append("|---|---|---|" + "---|" * (len(threads) - 1))
        for key, base in one.items():
            cells = list(map(str, key))
            for t in threads[1:]:
                ms = [r["ms"]["winnow"] for r in records if (r["case"], r["kind"], r["conn"]) == key and r["threads"] == t]
                cells.append(f"{base / ms[0]:.2f}x, {base / ms[0] / t * threads[0]:.0%}" if ms else "")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="256,384")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--conn", default="6,18,26")
    ap.add_argument("--densities", default="0.1,0.3,0.5,0.9")
    ap.add_argument("--kinds", default="binary,multi")
    ap.add_argument("--cases", default="", help="only the cases whose name contains this")
    ap.add_argument("--only", default="volumes", choices=("volumes", "images", "flatnonzero"))
    ap.add_argument("--scipy", action="store_true", help="also time scipy.ndimage.label (binary volumes)")
    ap.add_argument("--flat-sizes", default="1e4,1e5,1e6,1e7,1e8,1e9")
    ap.add_argument("--child-threads", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_threads:
        child(args)
        return
    threads = [int(t) for t in args.threads.split(",")]
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.2f} at the start; {args.only}, medians of {args.reps}", flush=True)
    records = []
    for t in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t))
        cmd = [sys.executable, os.path.abspath(__file__), "--child-threads", str(t)] + sys.argv[1:]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("@@"):
                r = json.loads(line[2:])
                records.append(r)
                peers = " ".join(f"{p} {r['ms'][p]:.2f} ms ({r['ratio'][p]:.2f}x)" for p in r["ms"] if p != "winnow")
                print(f"{r['case']:16} {r['kind']:6} {r['conn']:2} {t:2} thr: winnow {r['ms']['winnow']:.2f} ms, {peers}"
                      + ("" if r["same"] else "  LABELS DIFFER"), flush=True)
            else:
                print(line, end="", flush=True)
        if proc.wait() != 0:
            sys.exit(proc.returncode)
    try:
        load = os.getloadavg()[0]
    except OSError:
        pass
    print(f"\nload average {load:.2f} at the end\n")
    print(table(records, threads))
    if not all(r["same"] for r in records):
        sys.exit(1)


if __name__ == "__main__":
    main()
