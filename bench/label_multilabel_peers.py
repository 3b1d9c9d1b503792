#!/usr/bin/env python3
"""Multi-label 2D images on the GPU: winnow.label(multilabel=True) against cuCIM's greyscale-mode label.

Issue 16's target: GPU >= 5x cuCIM's `cucim.skimage.measure.label` on multi-label images (neighbours
connect only when their values are equal and non-zero; 0 is background). Both are called from Python
on the same CuPy arrays, 8-connectivity (cuCIM's connectivity=2), labels only, timed between CUDA
events on the null stream (medians after warm-up). The labels are compared once per image: the same
numbering (raster order of each component's first pixel) or not.

Images (uint8, values 0..k, built on the host from a fixed seed):
  regions   smoothed noise cut into 6 levels: large regions of one value touching regions of others
            (segmentation-like);
  speckle   independent pixels, values 0..3 uniformly: many tiny components of 4 values.

    python3 bench/label_multilabel_peers.py [--sizes 2048,8192] [--reps 20]
"""
import argparse

import numpy as np

from bench_common import gpu_median_ms


def regions(rng, side, levels=6):
    """Noise smoothed by a box filter in both axes (sums of shifted copies), cut into `levels` values."""
    noise = rng.random((side // 8 + 2, side // 8 + 2))
    coarse = (noise[:-2, :-2] + noise[1:-1, 1:-1] + noise[2:, 2:] + noise[:-2, 2:] + noise[2:, :-2]) / 5
    image = np.kron(coarse, np.ones((8, 8)))[:side, :side]
    image += rng.random((side, side)) * 0.05  # ragged borders between the regions
    edges = np.quantile(image, np.linspace(0, 1, levels + 1)[1:-1])
    return np.digitize(image, edges).astype(np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2048,8192")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import cupy as cp
    import winnow
    try:
        from cucim.skimage.measure import label as cucim_label
    except ImportError as e:
        raise SystemExit(f"cuCIM is needed: {e}")
    rng = np.random.default_rng(16)
    print(f"device: {winnow.devices()[0]['name']}; medians of {args.reps}")
    print("| image | side | components | winnow ms | cuCIM ms | cuCIM / winnow | same labels |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for side in (int(s) for s in args.sizes.split(",")):
        images = {"regions": regions(rng, side), "speckle": rng.integers(0, 4, (side, side), dtype=np.uint8)}
        for name, host in images.items():
            image = cp.asarray(host)
            ours = winnow.label(image, 8, multilabel=True)
            theirs = cucim_label(image, connectivity=2)
            same = bool(cp.array_equal(ours.astype(cp.int64), theirs.astype(cp.int64)))
            components = int(ours.max())
            ours_ms = gpu_median_ms(cp, lambda: winnow.label(image, 8, multilabel=True), args.reps)
            theirs_ms = gpu_median_ms(cp, lambda: cucim_label(image, connectivity=2), args.reps)
            print(f"| {name} | {side} | {components} | {ours_ms:.3f} | {theirs_ms:.3f} | {theirs_ms / ours_ms:.1f} |"
                  f" {'yes' if same else 'no'} |", flush=True)
            del image, ours, theirs


if __name__ == "__main__":
    main()
