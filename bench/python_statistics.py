#!/usr/bin/env python3
"""Statistics from Python: label(..., stats=True) and winnow.statistics against the labels alone
and against cc3d, on the CPU (NumPy) and, where CuPy sees a GPU, on the device.

    build/python-venv/bin/python bench/python_statistics.py [--reps 5] [--only cpu,gpu]

CPU: a random 256^3 mask at density 0.1, 6-connectivity (1.18 M components): winnow.label,
winnow.label(stats=True) and their ratio (target <= 2.5); cc3d.connected_components +
cc3d.statistics (its two calls, slices built) against label(stats=True) (target: 10x or more);
cc3d.statistics(no_slice_conversion=True) and winnow.statistics of the same labels (with and
without slices: the boxes stay an array until indexed).
GPU (CuPy): 512^3 masks at densities 0.1 and 0.5 (6-connectivity) and the bundled MNI152 grey
matter > 128 tiled to 591 x 466 x 567 (26-connectivity, 198 components): the labels alone, with
stats=True, and the copy of the statistics rows to the host (N rows of the device labeling's
64-byte records, a device array of that size copied to NumPy), and winnow.statistics of the
labels (a second pass over them, on the device); target on 512^3 density 0.1:
stats=True <= 2x that copy. Each time is the median of --reps after a warm-up, each call
followed by a stream sync.
"""

import argparse
import os
import pathlib
import time

import numpy as np

import winnow
from bench_common import synced_median, tiled_mni152_mask

ROOT = pathlib.Path(__file__).resolve().parents[1]


def ms(call, reps, sync=lambda: None):
    return synced_median(call, sync, reps)


def cpu(reps):
    import cc3d

    rng = np.random.default_rng(0)
    mask = rng.random((256, 256, 256)) < 0.1
    labels, n = winnow.label(mask, 6, return_N=True)
    alone = ms(lambda: winnow.label(mask, 6), reps)
    stats = ms(lambda: winnow.label(mask, 6, stats=True), reps)
    cc3d_two = ms(lambda: cc3d.statistics(cc3d.connected_components(mask, connectivity=6)), max(1, reps // 2))
    cc3d_nsc = ms(lambda: cc3d.statistics(labels, no_slice_conversion=True), reps)
    try:
        ours_nsc = ms(lambda: winnow.statistics(labels, no_slice_conversion=True), reps)
    except TypeError:  # a winnow before no_slice_conversion (for before / after runs)
        ours_nsc = float("nan")
    ours = ms(lambda: winnow.statistics(labels), reps)
    print(f"CPU ({os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, winnow {winnow.__file__}): 256^3 density "
          f"0.1, 6-connectivity, {n} components")
    print("| call | ms |\n|---|---:|")
    for name, value in (("winnow.label", alone), ("winnow.label(stats=True)", stats),
                        ("cc3d.connected_components + cc3d.statistics", cc3d_two),
                        ("cc3d.statistics(no_slice_conversion=True)", cc3d_nsc),
                        ("winnow.statistics(no_slice_conversion=True)", ours_nsc),
                        ("winnow.statistics", ours)):
        print(f"| {name} | {value:.1f} |")
    print(f"\nlabel(stats=True) / label = {stats / alone:.2f} (target <= 2.5); cc3d's two calls / "
          f"label(stats=True) = {cc3d_two / stats:.1f} (target >= 10)\n", flush=True)


def one_gpu_case(cupy, volume, connectivity, reps, sync):
    """(labels ms, stats=True ms, the rows' copy ms, winnow.statistics of the labels ms, N) of one
    device volume."""
    labels, n = winnow.label(volume, connectivity, return_N=True)
    alone = ms(lambda: winnow.label(volume, connectivity), reps, sync)
    stats = ms(lambda: winnow.label(volume, connectivity, stats=True), reps, sync)
    rows = cupy.empty(max(n, 1) * 64, cupy.uint8)  # the device labeling's records: 64 bytes each
    copy = ms(lambda: rows.get(), reps, sync)
    separate = ms(lambda: winnow.statistics(labels), reps, sync)
    return alone, stats, copy, separate, n


def gpu(reps):
    import cupy

    sync = cupy.cuda.get_current_stream().synchronize
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    print(f"GPU: {name}")
    print("| volume | components | labels ms | stats=True ms | rows to host ms | stats=True / copy | "
          "winnow.statistics(labels) ms |\n|---|---:|---:|---:|---:|---:|---:|")
    rng = cupy.random.default_rng(2)
    cases = [("512^3 density 0.1, 6-conn", lambda: rng.random((512, 512, 512), dtype=cupy.float32) < 0.1, 6),
             ("512^3 density 0.5, 6-conn", lambda: rng.random((512, 512, 512), dtype=cupy.float32) < 0.5, 6),
             ("MNI152 > 128 tiled 591x466x567, 26-conn",
              lambda: cupy.asarray(tiled_mni152_mask(ROOT / "examples/data/volumes/mni152_gm.nii.gz")), 26)]
    for label, make, connectivity in cases:
        alone, stats, copy, separate, n = one_gpu_case(cupy, make(), connectivity, reps, sync)
        print(f"| {label} | {n} | {alone:.2f} | {stats:.2f} | {copy:.2f} | {stats / copy:.2f} | {separate:.2f} |",
              flush=True)
        cupy.get_default_memory_pool().free_all_blocks()
    print("\ntarget: stats=True <= 2x the rows' copy on 512^3 density 0.1")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="cpu,gpu")
    args = parser.parse_args()
    started = time.time()
    if "cpu" in args.only:
        cpu(args.reps)
    if "gpu" in args.only:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise RuntimeError
        except Exception:  # noqa: BLE001 - no CuPy or no device
            print("GPU: skipped (CuPy sees no device)")
        else:
            gpu(args.reps)
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
