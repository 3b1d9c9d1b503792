#!/usr/bin/env python3
"""Peers of winnow's GPU labeling benchmark (bench_label_gpu), on the same masks:

* cupyx.scipy.ndimage.label (4-connectivity: the default cross; 8: a 3x3 block of ones), label +
  count, device-resident input, CUDA events, median of --reps runs; and "label+stats": the label
  plus area and centroid by cupy.bincount (no bounding boxes: cupyx has no fast segmented min/max);
* OpenCV cv2.connectedComponentsWithStats and cv2.connectedComponents on the CPU with --threads.

Random masks: pixel i is foreground when fmix32(i ^ seed * 0x9E3779B9) < density * 2^32, exactly
as bench_label_gpu builds them. Real-image masks: the .u8 files `bench_label_gpu --dump DIR` wrote.

The structuring element is a NumPy array: cupyx converts a CuPy one to NumPy on every call (a
device-to-host copy and a synchronisation inside the timing). --reps is the same default (20) as
bench_label_gpu's. cupyx is timed as a Python caller sees it, so on small images its time is
mostly Python overhead per call (argument checks, several kernel launches from Python, the
count read back to the host); the summary sets those ratios beside the largest image's.

With --ours LOG (the output of bench_label_gpu), the summary lists cupyx.label / winnow per case
(winnow: tile_merge, the automatic choice, labels + count + statistics).

    python3 bench/label_peers.py [--dump DIR] [--quick] [--reps 20] [--threads 16] [--conn 4|8] [--label-only]
                                 [--ours bench-label.log]
"""
import argparse
import glob
import os
import statistics
import time

import numpy as np

from bench_common import fmix32_mask, gpu_median_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--no-opencv", action="store_true")
    ap.add_argument("--conn", type=int, default=0, help="4 or 8 (default: both)")
    ap.add_argument("--label-only", action="store_true", help="skip cupyx label+area+centroid")
    ap.add_argument("--ours", default=None, help="bench_label_gpu's output, for the ratio summary")
    a = ap.parse_args()

    import cupy as cp
    import cupyx.scipy.ndimage as cndi
    try:
        import cv2
        cv2.setNumThreads(a.threads)
    except ImportError:
        cv2 = None
    if a.no_opencv:
        cv2 = None

    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "| cupy", cp.__version__,
          "| opencv", cv2.__version__ if cv2 else "-", f"({a.threads} threads)" if cv2 else "")
    cases = []  # real images first: they are quick and a time limit must not cut them off
    if a.dump:
        for f in sorted(glob.glob(os.path.join(a.dump, "*.u8"))):
            base = os.path.basename(f)[:-3]
            name, dims = base.rsplit("_", 1)
            w, h = map(int, dims.split("x"))
            cases.append((name, w, h, None, np.fromfile(f, dtype=np.uint8).reshape(h, w)))
    sizes = [1024, 4096, 16384] if a.quick else [1024, 4096, 8192, 16384]
    for s in sizes:
        for d in (0.1, 0.5, 0.9):
            cases.append((f"random_{s}_d{d}", s, s, d, None))

    structs = {4: None, 8: np.ones((3, 3), dtype=np.int32)}  # NumPy: see the note above

    cupyx_ms = {}  # (case, conn) -> cupyx.label ms
    print(f"{'case':22s} {'peer':28s} {'conn':>4s} {'ms':>10s} {'components':>12s}")
    for name, w, h, d, host in cases:
        if host is None:
            m = fmix32_mask(cp, w * h, 12345, d).reshape(h, w)
        else:
            m = cp.asarray(host)
        ys, xs = cp.meshgrid(cp.arange(h, dtype=cp.float64), cp.arange(w, dtype=cp.float64), indexing="ij")
        for conn in (8, 4):
            if a.conn and conn != a.conn:
                continue
            st = structs[conn]
            lab, n = cndi.label(m, structure=st)
            t = gpu_median_ms(cp, lambda: cndi.label(m, structure=st), a.reps)
            cupyx_ms[(name, conn)] = t
            print(f"{name:22s} {'cupyx.label':28s} {conn:4d} {t:10.4f} {int(n):12d}", flush=True)

            def with_stats():
                l, k = cndi.label(m, structure=st)
                lr = l.ravel()
                area = cp.bincount(lr, minlength=int(k) + 1)
                sx = cp.bincount(lr, weights=xs.ravel(), minlength=int(k) + 1)
                sy = cp.bincount(lr, weights=ys.ravel(), minlength=int(k) + 1)
                return area, sx / cp.maximum(area, 1), sy / cp.maximum(area, 1)

            if not a.label_only:
                t = gpu_median_ms(cp, with_stats, a.reps) if w * h <= 8192 * 8192 else float("nan")  # seconds per run beyond
                print(f"{name:22s} {'cupyx.label+area+centroid':28s} {conn:4d} {t:10.4f} {int(n):12d}", flush=True)
            if cv2 is not None:
                hm = cp.asnumpy(m)
                reps = 1 if w * h >= 16384 * 16384 else 3 if w * h >= 8192 * 8192 else 7
                for fn, label in ((lambda: cv2.connectedComponents(hm, connectivity=conn, ltype=cv2.CV_32S), "opencv.cc"),
                                  (lambda: cv2.connectedComponentsWithStats(hm, connectivity=conn, ltype=cv2.CV_32S),
                                   "opencv.ccWithStats")):
                    fn()
                    ts = []
                    for _ in range(reps):
                        t0 = time.perf_counter()
                        r = fn()
                        ts.append((time.perf_counter() - t0) * 1e3)
                    print(f"{name:22s} {label:28s} {conn:4d} {statistics.median(ts):10.4f} {int(r[0]) - 1:12d}", flush=True)
        del ys, xs
        cp.get_default_memory_pool().free_all_blocks()
    summary(cupyx_ms, a.ours, a.reps)


def read_ours(path):
    """(case, conn) -> ms with statistics of tile_merge, from bench_label_gpu's rows."""
    ours = {}
    if not path or not os.path.exists(path):
        return ours
    with open(path) as f:
        for line in f:
            col = line.split()
            # case algorithm conn ms ms_nostat Gpx/s copy_ms components [ok]
            if len(col) >= 8 and col[1] == "tile_merge" and col[2] in ("4", "8"):
                try:
                    ours[(col[0], int(col[2]))] = float(col[3])
                except ValueError:
                    pass
    return ours


def summary(cupyx_ms, ours_log, reps):
    ours = read_ours(ours_log)
    print("\n## summary")
    print(f"cupyx.scipy.ndimage.label (labels + count), median of {reps}; winnow tile_merge with statistics"
          + ("" if ours else " (no bench_label_gpu log given: --ours)"))
    print(f"{'case':22s} {'conn':>4s} {'cupyx ms':>10s} {'winnow ms':>10s} {'cupyx/winnow':>13s}")
    for (name, conn), t in cupyx_ms.items():
        w = ours.get((name, conn))
        ratio = f"{t / w:12.1f}x" if w else f"{'-':>13s}"
        print(f"{name:22s} {conn:4d} {t:10.4f} {w if w else float('nan'):10.4f} {ratio}")
    sizes = sorted({int(n.split("_")[1]) for n, _ in cupyx_ms if n.startswith("random_")})
    if sizes:
        big = [k for k in cupyx_ms if k[0].startswith(f"random_{sizes[-1]}_")]
        ratios = ", ".join(f"{k[0][len('random_'):]} conn {k[1]}: {cupyx_ms[k] / ours[k]:.1f}x"
                           for k in big if ours.get(k))
        print(f"note: cupyx's times include its Python overhead per call; on the real images and up to 1024^2 it is most "
              f"of the time, so those ratios measure that overhead more than the labeling. Read them beside the largest "
              f"image's ({sizes[-1]}^2{': ' + ratios if ratios else ''}).")


if __name__ == "__main__":
    main()
