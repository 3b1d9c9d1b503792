#!/usr/bin/env python3
"""Peer of winnow's CPU volume labeling benchmark (bench_label_volume_cpu): seung-lab cc3d
(`pip install connected-components-3d`, single-threaded) on the masks that
`bench_label_volume_cpu --dump DIR` wrote, for 6- and 26-connectivity:

* "labels": cc3d.connected_components(mask, connectivity=c, return_N=True) (uint32 labels);
* "labels+stats": the same followed by cc3d.statistics(labels) (voxel counts, bounding boxes,
  centroids), the statistics winnow computes in its call.

Median of --reps runs. With --ours LOG (the output of bench_label_volume_cpu), the summary lists
cc3d / winnow per case and connectivity: above 1 means winnow is faster.

    python3 bench/label_volume_cpu_peers.py --dump DIR [--reps 5] [--ours bench-label-volume.log]
"""
import argparse
import glob
import os

import numpy as np

from bench_common import cpu_median_ms


def read_ours(path):
    """(case, conn) -> (stats ms, labels ms, count) from bench_label_volume_cpu's table."""
    ours = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 6 and parts[1].isdigit():
                ours[(parts[0], int(parts[1]))] = (float(parts[3]), float(parts[4]), int(parts[5]))
    return ours


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True, help="directory of <case>.npy masks from bench_label_volume_cpu --dump")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ours", help="bench_label_volume_cpu output, for the ratio column")
    args = ap.parse_args()
    import cc3d

    ours = read_ours(args.ours) if args.ours else {}
    print(f"cc3d {getattr(cc3d, '__version__', '?')}, numpy {np.__version__}, 1 thread")
    print(f"{'case':18} {'conn':>4} {'labels ms':>10} {'+stats ms':>10} {'count':>9}" +
          (f" {'ours stats':>10} {'ratio':>6} {'ours labels':>11} {'ratio':>6}" if ours else ""))
    for path in sorted(glob.glob(os.path.join(args.dump, "*.npy"))):
        case = os.path.basename(path)[:-4]
        mask = np.load(path)
        for conn in (6, 26):
            labels, n = cc3d.connected_components(mask, connectivity=conn, return_N=True)
            t_labels = cpu_median_ms(lambda: cc3d.connected_components(mask, connectivity=conn, return_N=True), args.reps)
            t_stats = cpu_median_ms(lambda: cc3d.statistics(cc3d.connected_components(mask, connectivity=conn)), args.reps)
            row = f"{case:18} {conn:4d} {t_labels:10.2f} {t_stats:10.2f} {n:9d}"
            if (case, conn) in ours:
                s, l, count = ours[(case, conn)]
                row += f" {s:10.2f} {t_stats / s:6.2f} {l:11.2f} {t_labels / l:6.2f}"
                if count != n:
                    row += f"  COUNT DIFFERS (winnow {count})"
            print(row, flush=True)


if __name__ == "__main__":
    main()
