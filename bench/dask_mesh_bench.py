#!/usr/bin/env python3
"""Chunked marching cubes on Dask (winnow.dask.marching_cubes) against winnow.marching_cubes of
the whole volume in the same run, on the same cores (CPU) or the same GPU (CuPy chunks).

Volume: a float32 gyroid (sin x cos y + sin y cos z + sin z cos x, 2 periods per side, level 0),
size^3, in memory (NumPy; CuPy with --gpu), chunk^3 chunks. Both meshes are checked equal as
sets (same vertex and triangle counts, same sorted positions checksum). Medians of --reps runs
after a warm-up; voxels per second; the chunked call's time over the whole call's.

    python3 bench/dask_mesh_bench.py --size 256 --chunk 64
    python3 bench/dask_mesh_bench.py --size 1024 --chunk 256 --gpu
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def gyroid(xp, n):
    k = xp.float32(2 * np.pi * 2 / n)
    a = xp.arange(n, dtype=xp.float32) * k
    z, y, x = a[:, None, None], a[None, :, None], a[None, None, :]
    return (xp.sin(x) * xp.cos(y) + xp.sin(y) * xp.cos(z) + xp.sin(z) * xp.cos(x)).astype(xp.float32)


def timed(call, reps, sync):
    call()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = call()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def summary(mesh, xp):
    verts, faces = mesh[0], mesh[1]
    v = xp.asnumpy(verts) if xp.__name__ == "cupy" else verts
    return len(verts), len(faces), float(np.sort(v.astype(np.float64), axis=0).sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--chunk", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--gpu", action="store_true", help="CuPy chunks on the current GPU")
    args = ap.parse_args()
    import dask
    import dask.array as da

    import winnow
    import winnow.dask

    rows = []
    libs = [("cpu", np, lambda: None)]
    if args.gpu:
        import cupy as cp

        libs.append(("gpu", cp, cp.cuda.Device().synchronize))
    ok = True
    for name, xp, sync in libs:
        field = gyroid(xp, args.size)
        sync()
        whole_s, whole = timed(lambda f=field: winnow.marching_cubes(f, 0.0), args.reps, sync)
        darr = da.from_array(field, chunks=args.chunk, asarray=False)
        with dask.config.set(scheduler="threads"):
            chunked_s, chunked = timed(lambda d=darr: winnow.dask.marching_cubes(d, 0.0, progress=False), args.reps,
                                       sync)
        same = summary(whole, xp) == summary(chunked, xp)
        ok &= same
        voxels = args.size**3
        rows.append((name, args.size, args.chunk, len(whole[1]), whole_s, chunked_s, voxels / chunked_s, same))
        print(f"{name}: whole {whole_s * 1e3:.1f} ms, chunked {chunked_s * 1e3:.1f} ms, equal {same}", flush=True)
    print("\n| backend | volume | chunks | triangles | whole ms | dask ms | dask / whole | dask G voxels/s | equal |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    for name, n, c, t, w, d, rate, same in rows:
        print(f"| {name} | gyroid {n}^3 f32 | {c}^3 | {t} | {w * 1e3:.1f} | {d * 1e3:.1f} | {d / w:.2f}x | "
              f"{rate * 1e-9:.2f} | {same} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
