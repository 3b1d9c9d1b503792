#!/usr/bin/env python3
"""Peers of winnow's GPU volume labeling benchmark (bench_label_volume_gpu), on the same volumes:

* cupyx.scipy.ndimage.label with the 6-connectivity cross and the 26-connectivity 3x3x3 cube
  (device-resident input, labels + count, CUDA events, median of --reps runs);
* cuCIM's cucim.skimage.measure.label (connectivity 1 = 6, 3 = 26), when importable;
* cc3d.connected_components (CPU, 6 and 26) and, with --stats, cc3d.statistics, when importable
  (wall clock, median of --cpu-reps runs: cc3d is single-threaded and slow on 512^3).

Random volumes: voxel i (linear index, x fastest) is foreground when
fmix32(i ^ seed * 0x9E3779B9) < density * 2^32, seed 12345, exactly as bench_label_volume_gpu
builds them; and the bundled MNI152 grey-matter map > 128 repeated 3 x 2 x 3 times (x, y, z), as
there. The structuring element is a NumPy array (cupyx converts a CuPy one to NumPy on
every call, a copy and a synchronisation inside the timing).

    python3 bench/label_volume_peers.py [--quick] [--reps 20] [--cpu-reps 3] [--conn 6|26] [--stats]
"""
import argparse

import numpy as np

import os

from bench_common import cpu_median_ms, fmix32_mask, gpu_median_ms, tiled_mni152_mask

MNI152 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data", "volumes", "mni152_gm.nii.gz")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="256^3 only")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--cpu-reps", type=int, default=3)
    ap.add_argument("--conn", type=int, default=0, help="6 or 26 (default: both)")
    ap.add_argument("--stats", action="store_true", help="also time cc3d.statistics")
    ap.add_argument("--no-cpu", action="store_true", help="skip cc3d")
    a = ap.parse_args()

    import cupy as cp
    import cupyx.scipy.ndimage as cndi
    try:
        from cucim.skimage.measure import label as cucim_label
    except ImportError:
        cucim_label = None
    try:
        import cc3d
    except ImportError:
        cc3d = None
    if a.no_cpu:
        cc3d = None

    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "| cupy", cp.__version__,
          "| cucim", "yes" if cucim_label else "-", "| cc3d", getattr(cc3d, "__version__", "yes") if cc3d else "-")
    structures = {6: np.array([[[0, 0, 0], [0, 1, 0], [0, 0, 0]],
                               [[0, 1, 0], [1, 1, 1], [0, 1, 0]],
                               [[0, 0, 0], [0, 1, 0], [0, 0, 0]]], dtype=np.int32),
                  26: np.ones((3, 3, 3), dtype=np.int32)}
    conns = [a.conn] if a.conn else [6, 26]
    print(f"{'case':<18} {'conn':>4} {'peer':<22} {'ms':>10} {'components':>12}")
    cases = [(f"random_{side}_d{density}", side, density)
             for side in ([256] if a.quick else [256, 512]) for density in (0.1, 0.5, 0.9)]
    cases.append(("mni152_3x2x3", 0, 0))
    for name, side, density in cases:
        if side:
            vol = fmix32_mask(cp, side ** 3, 12345, density).reshape(side, side, side)  # (z, y, x): x fastest
        else:
            vol = cp.asarray(tiled_mni152_mask(MNI152))
        host = cp.asnumpy(vol) if cc3d else None
        for conn in conns:
            out = cp.empty(vol.shape, dtype=cp.int32)
            count = [0]

            def run_cupyx():
                count[0] = cndi.label(vol, structure=structures[conn], output=out)

            ms = gpu_median_ms(cp, run_cupyx, a.reps)
            print(f"{name:<18} {conn:>4} {'cupyx.ndimage.label':<22} {ms:>10.3f} {int(count[0]):>12}", flush=True)
            if cucim_label is not None:
                res = [None]

                def run_cucim():
                    res[0] = cucim_label(vol, connectivity=1 if conn == 6 else 3)

                ms = gpu_median_ms(cp, run_cucim, a.reps)
                print(f"{name:<18} {conn:>4} {'cucim.measure.label':<22} {ms:>10.3f} {int(res[0].max()):>12}", flush=True)
            if cc3d is not None:
                res = [None]

                def run_cc3d():
                    res[0] = cc3d.connected_components(host, connectivity=conn)

                ms = cpu_median_ms(run_cc3d, a.cpu_reps)
                print(f"{name:<18} {conn:>4} {'cc3d (1 core)':<22} {ms:>10.3f} {int(res[0].max()):>12}", flush=True)
                if a.stats:
                    labels = res[0]
                    ms = cpu_median_ms(lambda: cc3d.statistics(labels), a.cpu_reps)
                    print(f"{name:<18} {conn:>4} {'cc3d.statistics':<22} {ms:>10.3f} {'':>12}", flush=True)
            del out
        del vol
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
