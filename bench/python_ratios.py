#!/usr/bin/env python3
"""winnow from Python against its GPU peers at the large sizes, in one process, to compare with
the C++ benchmarks' ratios (issue 18's target: every large-size ratio holds from Python within
10 %).

Each case times winnow's public call on device arrays (CuPy; PyTorch for the compaction) and
the peers importable here, each followed by a stream sync, as the median of --reps runs after
a warm-up; inputs are random (seeded) and made once. Printed: ms per call and peer / winnow
(above 1: winnow faster), and winnow's time against the C++ benchmark's on the same case.

The C++ figures (H200, medians of CUDA events, bench/RESULTS.md and bench/results/*.md):
- label 8192^2, density 0.5, 8-connectivity, labels + count (no statistics): winnow 0.746-0.751
  ms, cupyx.scipy.ndimage.label 7.3-7.5 ms (labels + count) in the same runs: cupyx / winnow
  9.8-10.0x (with statistics 1.00 ms: 7.3-7.5x; results/label.md, RESULTS.md "Labeling").
- label 512^3, density 0.5, labels only: 6-connectivity 7.0 ms vs cupyx 11.6 ms (1.66x),
  26-connectivity 20.9 ms vs cupyx 25.2 ms (1.21x) (210fcef, RESULTS.md "Volume labeling").
- compaction, int32, value > t, stable: the C++ peer is CUB's DeviceSelect (1.09-1.18x CUB at
  2^24, 1.14-1.33x at 2^28; no 2^26 row), not CuPy's boolean indexing or torch.masked_select,
  which this script times: these ratios have no C++ counterpart, only winnow's own time does
  (2^24: 43-59 us, 2^28: 485-763 us at 1-99 % kept; 2^26 lies between, about 4x 2^24).
- marching cubes, 512^3 gyroid (two periods per side, level 0), welded mesh + normals: 1.49 ms
  at 319f10f (results/isosurface.md, outputs sized beforehand: one count and extraction); the
  C++ peers are pipelines inside the benchmark, so only winnow's time compares (Python includes
  the totals read back, the outputs' allocation and the scikit-image column order). The split
  row times the extension's two calls alone: the count with its totals read back, then the
  extraction from that count (no second classification).

    python3 bench/python_ratios.py [--reps 10] [--only label2d,label3d,compact,isosurface]
"""

import argparse

import numpy as np

import winnow
from bench_common import synced_median


def median_ms(call, sync, reps):
    return synced_median(call, sync, reps)


def optional(name):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        return None


def row(case, winnow_ms, peers, cpp_ms):
    cpp = f"{winnow_ms / cpp_ms:.2f}x C++ ({cpp_ms} ms)" if cpp_ms else "-"
    if not peers:
        print(f"| {case} | {winnow_ms:.3f} | (no peer) | - | {cpp} |", flush=True)
    for name, ms in peers:
        print(f"| {case} | {winnow_ms:.3f} | {name} {ms:.3f} | {ms / winnow_ms:.2f} | {cpp} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--only", default="label2d,label3d,compact,isosurface")
    args = parser.parse_args()
    cases = set(args.only.split(","))
    cupy, torch = optional("cupy"), optional("torch")
    if cupy is None:
        raise SystemExit("CuPy is needed (the labeling and isosurface peers and inputs)")
    ndimage = optional("cupyx.scipy.ndimage")
    cucim_measure = optional("cucim.skimage.measure")
    sync = cupy.cuda.get_current_stream().synchronize
    rng = np.random.default_rng(11)
    print(f"device: {winnow.devices()[0]['name']}; medians of {args.reps}")
    print("| case | winnow ms | peer ms | peer / winnow | winnow vs C++ |")
    print("|---|---:|---|---:|---|")

    if "label2d" in cases:
        mask = cupy.asarray(rng.random((8192, 8192)) < 0.5)
        eight = cupy.ones((3, 3), bool)
        ours = median_ms(lambda: winnow.label(mask, 8, return_N=True), sync, args.reps)
        peers = []
        if ndimage is not None:
            peers.append(("cupyx label", median_ms(lambda: ndimage.label(mask, eight), sync, args.reps)))
        if cucim_measure is not None:
            peers.append(("cucim label", median_ms(lambda: cucim_measure.label(mask, connectivity=2), sync,
                                                   args.reps)))
        row("label 8192^2 d0.5 8-conn, labels + N", ours, peers, 0.75)
        del mask

    if "label3d" in cases:
        volume = cupy.asarray(rng.random((512, 512, 512)) < 0.5)
        for connectivity, rank, cpp in ((6, 1, 7.0), (26, 3, 20.9)):
            ours = median_ms(lambda: winnow.label(volume, connectivity), sync, args.reps)
            peers = []
            if ndimage is not None:
                structure = cupy.asarray(np.ones((3, 3, 3), bool) if rank == 3 else
                                         __import__("scipy.ndimage").ndimage.generate_binary_structure(3, 1))
                peers.append(("cupyx label", median_ms(lambda: ndimage.label(volume, structure), sync, args.reps)))
            row(f"label 512^3 d0.5 {connectivity}-conn, labels", ours, peers, cpp)
        del volume

    if "compact" in cases:
        n = 1 << 26
        values = rng.integers(0, 1 << 30, n, dtype=np.int32)
        threshold = 1 << 29  # about half kept
        a = cupy.asarray(values)
        ours = median_ms(lambda: winnow.select(a, ">", threshold), sync, args.reps)
        peers = [("cupy a[a > t]", median_ms(lambda: a[a > threshold], sync, args.reps))]
        row("select 2^26 int32 50 %", ours, peers, None)
        mask = a > threshold
        ours = median_ms(lambda: winnow.compact(a, mask), sync, args.reps)
        row("compact 2^26 int32 50 % (mask given)", ours,
            [("cupy a[mask]", median_ms(lambda: a[mask], sync, args.reps))], None)
        if torch is not None:
            t = torch.from_numpy(values).cuda()
            tmask = t > threshold
            tsync = torch.cuda.synchronize
            ours = median_ms(lambda: winnow.compact(t, tmask), tsync, args.reps)
            peers = [("torch.masked_select", median_ms(lambda: torch.masked_select(t, tmask), tsync, args.reps))]
            row("compact 2^26 int32 50 %, torch", ours, peers, None)
        del a, mask

    if "isosurface" in cases:
        side = 512
        axis = cupy.linspace(0, 4 * np.pi, side, dtype=cupy.float32)  # two periods per side
        z, y, x = cupy.meshgrid(axis, axis, axis, indexing="ij")
        gyroid = cupy.sin(x) * cupy.cos(y) + cupy.sin(y) * cupy.cos(z) + cupy.sin(z) * cupy.cos(x)
        del x, y, z
        ours = median_ms(lambda: winnow.marching_cubes(gyroid, 0.0), sync, args.reps)
        faces = winnow.marching_cubes(gyroid, 0.0)[1]
        row(f"marching cubes 512^3 gyroid ({faces.shape[0] / 1e6:.2f} M triangles; C++: 5.06 M)", ours, [], 1.49)
        # The split: the extension's count (totals read back) and its extraction into outputs
        # allocated once, on the gyroid's pointers, as winnow.marching_cubes makes them.
        from winnow import _winnow

        stream, nz, ny, nx = cupy.cuda.get_current_stream().ptr, *gyroid.shape
        volume = (gyroid.data.ptr, "f", 4, nx, ny, nz, nx, nx * ny, 0.0, 1.0, 1.0, 1.0, False)
        vertices_n, triangles_n = _winnow.isosurface_count_device(*volume, gyroid.data.device_id, stream)
        mesh = [cupy.empty((vertices_n, 3), cupy.float32), cupy.empty((triangles_n, 3), cupy.uint32),
                cupy.empty((vertices_n, 3), cupy.float32), cupy.empty(vertices_n, cupy.float32)]
        count_ms = median_ms(lambda: _winnow.isosurface_count_device(*volume, gyroid.data.device_id, stream), sync,
                             args.reps)
        extract_ms = median_ms(lambda: _winnow.isosurface_extract_device(
            *volume, mesh[0].data.ptr, mesh[1].data.ptr, False, mesh[2].data.ptr, mesh[3].data.ptr, vertices_n,
            triangles_n, gyroid.data.device_id, stream), sync, args.reps)
        print(f"| marching cubes split: count + totals read {count_ms:.3f} ms, extraction {extract_ms:.3f} ms, "
              f"sum {count_ms + extract_ms:.3f} | | | |", flush=True)


if __name__ == "__main__":
    main()
