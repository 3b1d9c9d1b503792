"""A binary image labelled by the image labeling (its 2D algorithms: tile merge and block
union-find on CUDA, row stripes on the CPU) and by the volume labeling as a volume of one layer
(bricks merged across their faces; the path multi-label images take), on the same masks in one
process: the measurement behind keeping the two paths (and their request types) apart.

    python bench/label_image_paths.py [--size N] [--reps R] [--device]

Masks: random (fmix32, densities 0.1 / 0.5 / 0.9), N x N (default 8192); 8-connectivity on both paths (26 in one layer is 8). NumPy on the CPU (the
machine's threads, OMP_NUM_THREADS to change it); with --device, CuPy arrays on the current GPU
too (labels only, CUDA events). Prints medians (ms) and path ratios last.
"""
import argparse
import sys

import numpy as np

from bench_common import cpu_median_ms, fmix32_mask, gpu_median_ms

import winnow


def masks(xp, size):
    yield from ((f"random d{d}", fmix32_mask(xp, size * size, 7, d).reshape(size, size).astype(bool))
                for d in (0.1, 0.5, 0.9))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--device", action="store_true")
    args = parser.parse_args()
    rows = []
    libs = [("numpy", np, lambda f: cpu_median_ms(f, args.reps))]
    if args.device:
        import cupy as cp
        libs.append(("cupy", cp, lambda f: gpu_median_ms(cp, f, args.reps)))
    for name, xp, timed in libs:
        for case, mask in masks(xp, args.size):
            layer = mask[None]
            same = bool((winnow.label(mask, 8) == winnow.label(layer, 26)[0]).all())
            t_image = timed(lambda m=mask: winnow.label(m, 8))
            t_volume = timed(lambda m=layer: winnow.label(m, 26))
            rows.append((name, case, t_image, t_volume, same))
            print(f"{name} {case}: image path {t_image:.3f} ms, volume path {t_volume:.3f} ms, same labels {same}",
                  flush=True)
    print("\n| input | mask | image path ms | one-layer volume ms | volume / image | same labels |")
    print("|---|---|---:|---:|---:|---|")
    for name, case, ti, tv, same in rows:
        print(f"| {name} | {case} {args.size}^2 | {ti:.3f} | {tv:.3f} | {tv / ti:.2f}x | {same} |")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
