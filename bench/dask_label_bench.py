#!/usr/bin/env python3
"""Chunked labeling on Dask (winnow.dask) against its peers in the same run:

* "whole": winnow.label of the whole volume in memory on the same cores (OpenMP threads = workers);
* "dask zarr->zarr": winnow.dask.label_to_zarr(da.from_zarr(input)) on the threaded scheduler
  (and with --processes on a dask.distributed LocalCluster of worker processes, one thread each);
* "dask in memory": winnow.dask.label of the in-memory volume, labels persisted;
* "dask-image" (--dask-image, if installed): dask_image.ndmeasure.label, zarr to zarr on the same
  scheduler with the same connectivity (in a child process with a time limit);
* scaling (--scaling 1,2,4,...): zarr -> zarr on 1..N threads, parallel efficiency t1 / (n tn);
* --gpu: CuPy chunks in GPU memory (winnow.dask.label, labels persisted on the device) against
  winnow.label of the whole CuPy volume; --gpu-check-size S: an S^3 volume (made chunk by chunk,
  never whole) labelled with CuPy chunks and with NumPy chunks, compared chunk by chunk.

Volumes: "random" (voxel i foreground when a 64-bit hash of (i, seed) < density), "mri" (the
bundled MNI152 grey-matter map > 128, tiled periodically to size^3), uint8, written to zarr in
--chunk^3 chunks (not timed). Every labeling is checked equal to the whole-volume call (a
checksum of the labels). Peak memory: threads, a fresh process's peak (VmHWM) above what it held
after its imports; processes, each worker's RSS sampled every 5 ms during the run, above its idle
RSS (the largest over the workers); whole, the peak above the volume it labels. Writes nothing
outside --out. Prints the table last (and writes it to OUT/dask_label_bench.md, the rows as JSON
to OUT/dask_label_bench.json).

    python3 bench/dask_label_bench.py --out /tmp/dask-bench --size 256 --chunk 64 --workers 2
    python3 bench/dask_label_bench.py --out /scratch/b --size 1024 --chunk 128 --workers 16 \\
        --scaling 1,2,4,8,16 --processes --dask-image --gpu --gpu-check-size 2048
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import multiprocessing
import os
import platform
import resource
import shutil
import statistics
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MNI152 = os.path.join(HERE, "..", "examples", "data", "volumes", "mni152_gm.nii.gz")


# ---------------------------------------------------------------- volumes, made chunk by chunk

def hash_mask(xp, shape, offset, volume, density, seed):
    """Foreground where splitmix64(global flat index ^ seed) < density * 2^64, for the block of
    `shape` at `offset` in a volume of shape `volume` (xp: numpy or cupy)."""
    z, y, x = (xp.arange(o, o + s, dtype=xp.uint64) for o, s in zip(offset, shape))
    flat = (z[:, None, None] * xp.uint64(volume[1]) + y[None, :, None]) * xp.uint64(volume[2]) + x[None, None, :]
    h = flat ^ xp.uint64(seed * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF)
    h = (h ^ (h >> xp.uint64(30))) * xp.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> xp.uint64(27))) * xp.uint64(0x94D049BB133111EB)
    h ^= h >> xp.uint64(31)
    return (h < xp.uint64(min(int(density * 2.0**64), 2**64 - 1))).astype(xp.uint8)


@functools.lru_cache(maxsize=None)
def mni152_mask():
    """The bundled MNI152 grey-matter map (NIfTI-1 uint8) > 128 as a (z, y, x) uint8 array (read
    once per process: tasks that make blocks of it name it, they do not carry it)."""
    data = gzip.open(MNI152).read()
    dims = struct.unpack("<8h", data[40:56])
    offset = int(struct.unpack("<f", data[108:112])[0])
    nx, ny, nz = dims[1:4]
    vol = np.frombuffer(data, np.uint8, count=nx * ny * nz, offset=offset).reshape(nz, ny, nx)
    return (vol > 128).astype(np.uint8)


def tiled_block(base, shape, offset, xp=np):
    """The block of the periodic tiling of base (a small volume repeated along every axis), made
    where xp makes arrays (CuPy: on the device, from base copied there once per process)."""
    if xp is not np:
        base = _device_copy(base)
    index = xp.ix_(*((xp.arange(o, o + s) % n) for o, s, n in zip(offset, shape, base.shape)))
    return xp.ascontiguousarray(base[index])


_device_copies = {}


def _device_copy(base):
    import cupy

    key = (id(base), cupy.cuda.runtime.getDevice())
    if key not in _device_copies:
        _device_copies[key] = (base, cupy.asarray(base))  # base kept: its id stays its own
    return _device_copies[key][1]


def make_block(kind, shape, offset, volume, density, seed, base=None, xp=np):
    """The block of the volume at offset; "mri" tiles base (default: the bundled MNI152 mask)."""
    if kind == "random":
        return hash_mask(xp, shape, offset, volume, density, seed)
    return tiled_block(mni152_mask() if base is None else base, shape, offset, xp)


def lazy_volume(kind, size, chunk, density, seed, xp=np):
    """The volume as a dask array made chunk by chunk (never whole)."""
    import dask.array as da

    volume = (size,) * 3

    def block(block_info=None):  # the MNI mask is read on the worker, not shipped with each task
        info = block_info[None]
        shape = tuple(e - s for s, e in info["array-location"])
        offset = tuple(s for s, _ in info["array-location"])
        return make_block(kind, shape, offset, volume, density, seed, None, xp)

    meta = np.zeros((0, 0, 0), np.uint8) if xp is np else xp.zeros((0, 0, 0), np.uint8)
    return da.map_blocks(block, dtype=np.uint8, chunks=tuple((chunk,) * (size // chunk) + ((size % chunk,) if size % chunk
                                                                                          else ()) for _ in range(3)),
                         meta=meta)


# ---------------------------------------------------------------- measuring

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def checksum(labels):
    """Order-sensitive checksum of a label array (NumPy), to compare runs without keeping labels."""
    flat = np.ascontiguousarray(labels).reshape(-1).astype(np.uint64)
    weights = (np.arange(flat.size, dtype=np.uint64) * np.uint64(0x9E3779B1) + np.uint64(1)) & np.uint64(0xFFFFFFFF)
    return int(np.bitwise_xor.reduce(flat * weights)) ^ int(flat.sum())


def zarr_checksum(path, chunk):
    """checksum of a zarr label array, read a slab at a time."""
    import zarr

    z = zarr.open_array(path, mode="r")
    return checksum(z[:])


def median_time(run, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def human(nbytes):
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.0f} MiB"


# ---------------------------------------------------------------- the peers

def run_whole(volume, connectivity, workers, reps):
    import winnow
    from winnow import _winnow

    previous = _winnow.set_cpu_threads_of_calling_thread(workers)
    try:
        winnow.label(volume, connectivity, backend="cpu")  # warm-up
        reset_peak()
        base = rss_bytes()
        seconds, _ = median_time(lambda: winnow.label(volume, connectivity, backend="cpu"), reps)
        labels, n = winnow.label(volume, connectivity, return_N=True, backend="cpu")
        return seconds, n, checksum(labels), peak_bytes() - base
    finally:
        _winnow.set_cpu_threads_of_calling_thread(previous)


def run_dask_zarr_threads(source, out_dir, connectivity, workers, reps):
    import dask
    import dask.array as da
    import winnow.dask

    target = os.path.join(out_dir, "labels-threads.zarr")
    times, n = [], 0
    for _ in range(reps):
        shutil.rmtree(target, ignore_errors=True)
        start = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=workers):
            n = winnow.dask.label_to_zarr(da.from_zarr(source), target, connectivity, progress=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times), n, target


def _threads_peak_child(source, target, connectivity, workers, queue):
    """label_to_zarr once in a fresh process: its peak memory above what it held after the imports."""
    try:
        import dask
        import dask.array as da
        import winnow.dask

        shutil.rmtree(target, ignore_errors=True)
        base = rss_bytes()
        reset_peak()
        with dask.config.set(scheduler="threads", num_workers=workers):
            winnow.dask.label_to_zarr(da.from_zarr(source), target, connectivity, progress=False)
        queue.put(peak_bytes() - base)
    except Exception as error:  # noqa: BLE001 - reported in the table
        queue.put(f"{type(error).__name__}: {error}")


def threads_peak(source, out_dir, connectivity, workers):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_threads_peak_child, args=(source, os.path.join(out_dir, "labels-peak.zarr"),
                                                              connectivity, workers, queue))
    child.start()
    child.join()
    found = queue.get() if not queue.empty() else None
    return found if isinstance(found, int) else None


def run_dask_memory(volume, chunk, connectivity, workers, reps):
    import dask
    import dask.array as da
    import winnow.dask

    darr = da.from_array(volume, chunks=chunk)
    results = {}

    def once():
        with dask.config.set(scheduler="threads", num_workers=workers):
            labels, n = winnow.dask.label(darr, connectivity, progress=False)
            results["labels"], results["n"] = labels.persist(), n

    seconds, _ = median_time(once, reps)
    return seconds, results["n"], checksum(results["labels"].compute())


def _start_sampling(dask_worker):
    """In a worker: its RSS now, and a thread that keeps the largest RSS seen (every 5 ms)."""
    import threading

    state = {"peak": rss_bytes(), "run": True}

    def sample():
        while state["run"]:
            state["peak"] = max(state["peak"], rss_bytes())
            time.sleep(0.005)

    threading.Thread(target=sample, daemon=True).start()
    dask_worker.winnow_bench_sampling = state
    return state["peak"]


def _stop_sampling(dask_worker):
    state = dask_worker.winnow_bench_sampling
    state["run"] = False
    return max(state["peak"], rss_bytes())


def run_dask_zarr_processes(source, out_dir, connectivity, workers, reps):
    """label_to_zarr on a fresh LocalCluster per repetition; each worker's RSS sampled during the
    run: (median seconds, N, output, largest growth of a worker above its idle RSS, its largest
    RSS)."""
    import dask.array as da
    import winnow.dask
    from distributed import Client, LocalCluster

    target = os.path.join(out_dir, "labels-processes.zarr")
    times, n, growth, largest = [], 0, 0, 0
    for _ in range(reps):
        shutil.rmtree(target, ignore_errors=True)
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          local_directory=os.path.join(out_dir, "dask-worker-space")) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("winnow.dask"))
            idle = client.run(_start_sampling)
            start = time.perf_counter()
            n = winnow.dask.label_to_zarr(da.from_zarr(source), target, connectivity, progress=False)
            times.append(time.perf_counter() - start)
            peaks = client.run(_stop_sampling)
            growth = max(growth, max(peaks[w] - idle[w] for w in peaks))
            largest = max(largest, max(peaks.values()))
    return statistics.median(times), n, target, growth, largest


def _dask_image_child(source, target, connectivity, workers, queue):
    try:
        import dask
        import dask.array as da
        import scipy.ndimage as ndi
        from dask_image import ndmeasure

        structure = ndi.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[connectivity])
        start = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=workers):
            labels, n = ndmeasure.label(da.from_zarr(source), structure)
            n = int(n.compute() if hasattr(n, "compute") else n)
            labels.astype(np.uint32).to_zarr(target)
        queue.put(("ok", time.perf_counter() - start, n, peak_bytes()))
    except Exception as error:  # noqa: BLE001 - reported in the table
        queue.put(("error", f"{type(error).__name__}: {error}", 0, 0))


def run_dask_image(source, out_dir, connectivity, workers, timeout):
    try:
        import dask_image  # noqa: F401
    except ImportError:
        return None
    target = os.path.join(out_dir, "labels-dask-image.zarr")
    shutil.rmtree(target, ignore_errors=True)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_dask_image_child, args=(source, target, connectivity, workers, queue))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        return ("timeout", timeout, 0, 0, target)
    status, seconds, n, peak = queue.get() if not queue.empty() else ("error", "no result", 0, 0)
    return (status, seconds, n, peak, target)


# ---------------------------------------------------------------- GPU

def run_gpu(size, chunk, connectivity, density, seed, workers, reps):
    import cupy as cp
    import dask
    import dask.array as da
    import winnow
    import winnow.dask

    volume = hash_mask(cp, (size,) * 3, (0, 0, 0), (size,) * 3, density, seed)
    whole = winnow.label(volume, connectivity)
    cp.cuda.runtime.deviceSynchronize()

    def label_whole():
        winnow.label(volume, connectivity)
        cp.cuda.runtime.deviceSynchronize()

    t_whole, _ = median_time(label_whole, reps)
    darr = da.from_array(volume, chunks=chunk, asarray=False)
    held = {}

    def label_chunks():
        with dask.config.set(scheduler="threads", num_workers=workers):
            labels, n = winnow.dask.label(darr, connectivity, progress=False)
            held["labels"] = labels.persist()
        cp.cuda.runtime.deviceSynchronize()

    label_chunks()
    t_dask, _ = median_time(label_chunks, reps)
    equal = bool((held["labels"].compute() == whole).all())
    return t_whole, t_dask, equal


def run_gpu_check(size, chunk, connectivity, density, seed, gpu_workers, cpu_workers):
    """An S^3 volume labelled from CuPy chunks and from NumPy chunks, compared chunk by chunk."""
    import cupy as cp
    import dask
    import dask.array as da
    import winnow.dask

    start = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=gpu_workers):
        gpu_labels, gpu_n = winnow.dask.label(lazy_volume("random", size, chunk, density, seed, cp), connectivity,
                                              progress=False)
    t_gpu = time.perf_counter() - start
    start = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=cpu_workers):
        cpu_labels, cpu_n = winnow.dask.label(lazy_volume("random", size, chunk, density, seed, np), connectivity,
                                              progress=False)
    t_cpu = time.perf_counter() - start
    with dask.config.set(scheduler="threads", num_workers=gpu_workers):
        same = da.map_blocks(lambda g, c: np.array([[[bool((cp.asnumpy(g) == c).all())]]]), gpu_labels, cpu_labels,
                             dtype=bool, chunks=(1, 1, 1), meta=np.zeros((0, 0, 0), bool)).all().compute()
    return gpu_n, cpu_n, bool(same), t_gpu, t_cpu, str(gpu_labels.dtype)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--out", required=True, help="folder for the zarr arrays and the results (created)")
    ap.add_argument("--size", type=int, default=256, help="edge of the cubic volumes")
    ap.add_argument("--chunk", type=int, default=64, help="chunk edge (zarr chunks and dask chunks)")
    ap.add_argument("--volumes", default="random,mri", help="random, mri or both")
    ap.add_argument("--density", type=float, default=0.3)
    ap.add_argument("--connectivity", type=int, default=26)
    ap.add_argument("--workers", type=int, default=os.cpu_count(),
                    help="threads / processes (default: cores); GPU runs use at most 4 threads")
    ap.add_argument("--scaling", default="", help="worker counts for the scaling rows, e.g. 1,2,4,8,16")
    ap.add_argument("--processes", action="store_true", help="also on a LocalCluster of worker processes")
    ap.add_argument("--dask-image", action="store_true", help="also dask_image.ndmeasure.label (if installed)")
    ap.add_argument("--dask-image-timeout", type=float, default=900)
    ap.add_argument("--gpu", action="store_true", help="CuPy chunks in GPU memory (size^3)")
    ap.add_argument("--gpu-size", type=int, help="edge of the GPU volume (default --size)")
    ap.add_argument("--gpu-chunk", type=int, help="chunk edge of the GPU runs (default --chunk)")
    ap.add_argument("--gpu-check-size", type=int, help="label an S^3 volume with CuPy and NumPy chunks, compare")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    import dask
    import zarr

    import winnow

    os.makedirs(args.out, exist_ok=True)
    versions = {"python": platform.python_version(), "numpy": np.__version__, "dask": dask.__version__,
                "zarr": zarr.__version__, "winnow": winnow.__version__, "cores": os.cpu_count(),
                "cpu": platform.processor() or platform.machine()}
    try:
        import distributed
        versions["distributed"] = distributed.__version__
    except ImportError:
        pass
    try:
        from importlib.metadata import version

        versions["dask-image"] = version("dask-image")
    except Exception:  # noqa: BLE001 - not installed
        pass
    print(" ".join(f"{k} {v}" for k, v in versions.items()), flush=True)
    rows, scaling = [], []
    voxels = args.size ** 3
    for kind in [v for v in args.volumes.split(",") if v]:
        source = os.path.join(args.out, f"{kind}-{args.size}.zarr")
        shutil.rmtree(source, ignore_errors=True)
        made = time.perf_counter()
        lazy_volume(kind, args.size, args.chunk, args.density, args.seed).to_zarr(source)
        volume = zarr.open_array(source, mode="r")[:]
        print(f"{kind}: {args.size}^3 in {source} ({time.perf_counter() - made:.1f} s to write)", flush=True)
        t_whole, n, whole_sum, whole_peak = run_whole(volume, args.connectivity, args.workers, args.reps)
        rows.append(dict(volume=kind, method="winnow.label whole, in memory", workers=args.workers, seconds=t_whole,
                         n=n, equal=True, peak=whole_peak))
        print(f"  whole: {t_whole:.3f} s, N = {n}", flush=True)
        t, n_d, target = run_dask_zarr_threads(source, args.out, args.connectivity, args.workers, args.reps)
        rows.append(dict(volume=kind, method="winnow.dask zarr->zarr, threads", workers=args.workers, seconds=t, n=n_d,
                         equal=n_d == n and zarr_checksum(target, args.chunk) == whole_sum,
                         peak=threads_peak(source, args.out, args.connectivity, args.workers),
                         peak_note="process, above its imports"))
        print(f"  dask zarr->zarr threads: {t:.3f} s", flush=True)
        t, n_d, sums = run_dask_memory(volume, args.chunk, args.connectivity, args.workers, args.reps)
        rows.append(dict(volume=kind, method="winnow.dask in memory, threads", workers=args.workers, seconds=t, n=n_d,
                         equal=n_d == n and sums == whole_sum, peak=None))
        print(f"  dask in memory threads: {t:.3f} s", flush=True)
        if args.processes:
            t, n_d, target, peak, absolute = run_dask_zarr_processes(source, args.out, args.connectivity, args.workers,
                                                                     args.reps)
            rows.append(dict(volume=kind, method="winnow.dask zarr->zarr, LocalCluster processes", workers=args.workers,
                             seconds=t, n=n_d, equal=n_d == n and zarr_checksum(target, args.chunk) == whole_sum,
                             peak=peak, peak_note=f"per worker, above its idle RSS; {human(absolute)} in all"))
            print(f"  dask zarr->zarr processes: {t:.3f} s", flush=True)
        if args.dask_image:
            found = run_dask_image(source, args.out, args.connectivity, args.workers, args.dask_image_timeout)
            if found is None:
                print("  dask-image: not installed", flush=True)
            else:
                status, t, n_d, peak, target = found
                if status == "ok":
                    rows.append(dict(volume=kind, method="dask-image ndmeasure.label zarr->zarr, threads",
                                     workers=args.workers, seconds=t, n=n_d, equal=n_d == n, peak=peak,
                                     peak_note="process"))
                else:
                    rows.append(dict(volume=kind, method=f"dask-image ndmeasure.label: {status} {t}",
                                     workers=args.workers, seconds=float("nan"), n=0, equal=False, peak=None))
                print(f"  dask-image: {status} {t}", flush=True)
                shutil.rmtree(target, ignore_errors=True)
        for w in [int(w) for w in args.scaling.split(",") if w]:
            t, n_d, target = run_dask_zarr_threads(source, args.out, args.connectivity, w, args.reps)
            t1 = run_whole(volume, args.connectivity, w, args.reps)[0]
            scaling.append(dict(volume=kind, workers=w, seconds=t, whole_seconds=t1,
                                equal=n_d == n and zarr_checksum(target, args.chunk) == whole_sum))
            print(f"  scaling {w}: {t:.3f} s (whole {t1:.3f} s)", flush=True)
        for name in os.listdir(args.out):
            if name.startswith("labels-"):
                shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
        del volume
    gpu_rows = []
    gpu_chunk = args.gpu_chunk or args.chunk
    if args.gpu:
        size = args.gpu_size or args.size
        t_whole, t_dask, equal = run_gpu(size, gpu_chunk, args.connectivity, args.density, args.seed,
                                         min(args.workers, 4), args.reps)
        gpu_rows.append(f"| random {size}^3 d{args.density} in GPU memory | {gpu_chunk}^3 CuPy chunks | "
                        f"{t_whole * 1e3:.1f} | {t_dask * 1e3:.1f} | {size ** 3 / t_dask / 1e9:.2f} | {equal} |")
    if args.gpu_check_size:
        gpu_n, cpu_n, same, t_gpu, t_cpu, dtype = run_gpu_check(args.gpu_check_size, gpu_chunk, args.connectivity,
                                                                args.density, args.seed, min(args.workers, 4),
                                                                args.workers)
        gpu_rows.append(f"| random {args.gpu_check_size}^3 d{args.density}, made chunk by chunk | CuPy vs NumPy chunks "
                        f"({dtype}) | N {gpu_n} vs {cpu_n} | stages 1-2: {t_gpu:.1f} s GPU, {t_cpu:.1f} s CPU | | "
                        f"{same and gpu_n == cpu_n} |")

    lines = [f"{' '.join(f'{k} {v}' for k, v in versions.items())}; {args.connectivity}-connectivity, "
             f"{args.size}^3 uint8, {args.chunk}^3 chunks, median of {args.reps}", "",
             "| volume | method | workers | seconds | G voxels/s | / whole | N | equal | peak memory |",
             "|---|---|---:|---:|---:|---:|---:|---|---|"]
    whole = {r["volume"]: r["seconds"] for r in rows if r["method"].startswith("winnow.label whole")}
    for r in rows:
        peak = "" if r["peak"] is None else human(r["peak"]) + (f" ({r['peak_note']})" if r.get("peak_note") else "")
        lines.append(f"| {r['volume']} | {r['method']} | {r['workers']} | {r['seconds']:.3f} | "
                     f"{voxels / r['seconds'] / 1e9:.2f} | {r['seconds'] / whole[r['volume']]:.2f} | {r['n']} | "
                     f"{r['equal']} | {peak} |")
    if scaling:
        lines += ["", "| volume | workers | zarr->zarr s | speedup | parallel efficiency | whole s | / whole | equal |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in scaling:
            t1 = next(s["seconds"] for s in scaling if s["volume"] == r["volume"] and s["workers"] == min(
                x["workers"] for x in scaling if x["volume"] == r["volume"]))
            w1 = min(x["workers"] for x in scaling if x["volume"] == r["volume"])
            speedup = t1 / r["seconds"]
            lines.append(f"| {r['volume']} | {r['workers']} | {r['seconds']:.3f} | {speedup:.2f} | "
                         f"{speedup * w1 / r['workers']:.2f} | {r['whole_seconds']:.3f} | "
                         f"{r['seconds'] / r['whole_seconds']:.2f} | {r['equal']} |")
    if gpu_rows:
        lines += ["", "| GPU volume | chunks | whole ms | dask ms | dask G voxels/s | equal |", "|---|---|---:|---:|---:|---|"]
        lines += gpu_rows
    table = "\n".join(lines)
    with open(os.path.join(args.out, "dask_label_bench.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(args.out, "dask_label_bench.json"), "w") as f:
        json.dump(dict(versions=versions, args=vars(args), rows=rows, scaling=scaling, gpu=gpu_rows), f, indent=1,
                  default=str)
    print()
    print(table)


if __name__ == "__main__":
    main()
