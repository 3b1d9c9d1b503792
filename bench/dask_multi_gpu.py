#!/usr/bin/env python3
"""winnow.dask.label on several GPUs of one host: one Dask worker process per GPU.

A distributed cluster of one worker per GPU (one thread; --threads-per-worker), each worker seeing
only its own card (CUDA_VISIBLE_DEVICES), the volume made chunk by chunk on the workers (CuPy chunks; nothing
shipped from the client), labelled with winnow.dask.label. For each GPU count: the time of stages
1-2 (chunk labeling, faces, global merge: the call) and of stage 3 (relabel, and each chunk's
digest; --keep: the labels persisted on the workers first), the busy time of each kind of task
from distributed's task stream, and per-chunk digests of the labels compared with one winnow.label
call on the whole volume (by default on the CPU, the path the GPU results must equal; --reference
gpu: on the first GPU), made in this process before the cluster starts.

With --mesh: winnow.dask.marching_cubes of a float32 gyroid (2 periods per side, level 0) made
chunk by chunk on the workers, the mesh assembled in the client; checked against one
winnow.marching_cubes call on the whole volume on the CPU (vertex and triangle counts, and the
sum of the sorted vertex coordinates).

    python bench/dask_multi_gpu.py --size 1024 --chunk 256 --gpus 1,2 --connectivity 26
    python bench/dask_multi_gpu.py --mesh --size 1024 --chunk 256 --gpus 1,2,4
    python bench/dask_multi_gpu.py --numpy --size 128 --chunk 64 --gpus 1,2   # the plumbing, CPU only
    python bench/dask_multi_gpu.py --share-gpu --size 1024 --chunk 256 --gpus 1,2   # two workers, one GPU

NVLink multicast stays off in every worker (NCCL_NVLS_ENABLE=0 and the like).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dask_label_bench import lazy_volume, make_block, mni152_mask  # noqa: E402

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NO_MULTICAST)


def digest(block):
    """One uint64 per chunk: sum of label * (2 * flat index + 1) mod 2^64 (NumPy or CuPy)."""
    xp = sys.modules["cupy"] if type(block).__module__.startswith("cupy") else np
    weights = xp.arange(block.size, dtype=xp.uint64) * xp.uint64(2) + xp.uint64(1)
    value = (block.reshape(-1).astype(xp.uint64) * weights).sum(dtype=xp.uint64)
    return np.array([[[int(value)]]], dtype=np.uint64)


def whole_digests(labels, chunk):
    """digest() of every chunk of a whole labelled volume, as an array over the chunk grid (NumPy
    volumes: the chunks on a thread pool)."""
    from concurrent.futures import ThreadPoolExecutor

    grid = tuple(-(-s // chunk) for s in labels.shape)
    out = np.zeros(grid, np.uint64)

    def one(index):
        z, y, x = index
        out[index] = digest(labels[z * chunk:(z + 1) * chunk, y * chunk:(y + 1) * chunk,
                                   x * chunk:(x + 1) * chunk])[0, 0, 0]

    if isinstance(labels, np.ndarray):
        with ThreadPoolExecutor(os.cpu_count()) as pool:
            list(pool.map(one, np.ndindex(*grid)))
    else:
        for index in np.ndindex(*grid):
            one(index)
    return out


def whole_volume(args, xp):
    """The volume of lazy_volume() made whole (NumPy: slab by slab on a thread pool)."""
    from concurrent.futures import ThreadPoolExecutor

    shape = (args.size,) * 3
    base = mni152_mask() if args.kind == "mri" else None
    if xp is not np:
        return make_block(args.kind, shape, (0, 0, 0), shape, args.density, args.seed, base, xp)
    volume = np.empty(shape, np.uint8)

    def slab(z):
        depth = min(8, args.size - z)
        volume[z:z + depth] = make_block(args.kind, (depth,) + shape[1:], (z, 0, 0), shape, args.density, args.seed,
                                         base, np)

    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(slab, range(0, args.size, 8)))
    return volume


def gyroid_block(xp, size, location):
    """The block of the size^3 float32 gyroid (sin x cos y + sin y cos z + sin z cos x) at location."""
    k = xp.float32(2 * np.pi * 2 / size)
    z, y, x = (xp.arange(lo, hi, dtype=xp.float32) * k for lo, hi in location)
    z, y, x = z[:, None, None], y[None, :, None], x[None, None, :]
    return (xp.sin(x) * xp.cos(y) + xp.sin(y) * xp.cos(z) + xp.sin(z) * xp.cos(x)).astype(xp.float32)


def lazy_gyroid(size, chunk, xp):
    import dask.array as da

    def block(block_info=None):
        return gyroid_block(xp, size, block_info[None]["array-location"])

    meta = np.zeros((0, 0, 0), np.float32) if xp is np else xp.zeros((0, 0, 0), np.float32)
    return da.map_blocks(block, dtype=np.float32, chunks=da.core.normalize_chunks(chunk, (size,) * 3), meta=meta)


def mesh_summary(mesh):
    verts, faces = mesh[0], mesh[1]
    v = verts.get() if hasattr(verts, "get") else np.asarray(verts)
    return len(v), len(faces), float(np.sort(v.astype(np.float64), axis=0).sum())


def mesh_reference(args, xp):
    """The whole gyroid meshed by one winnow.marching_cubes call on the CPU: the mesh's summary.
    The volume is made by the chunks' library (CuPy's sin and cos differ from NumPy's in the last
    bit) and copied to the host."""
    import winnow

    volume = np.empty((args.size,) * 3, np.float32)
    for z in range(0, args.size, 64):  # slab by slab: the whole volume's temporaries outgrow a device
        slab = gyroid_block(xp, args.size, [(z, min(z + 64, args.size))] + [(0, args.size)] * 2)
        volume[z:z + 64] = slab.get() if hasattr(slab, "get") else slab
    start = time.perf_counter()
    mesh = winnow.marching_cubes(volume, 0.0)
    seconds = time.perf_counter() - start
    return mesh_summary(mesh), seconds


def reference(args, xp):
    """The whole volume labelled by one winnow.label call: N and the per-chunk digests."""
    import winnow

    if args.reference == "cpu":
        xp = np
    volume = whole_volume(args, xp)
    start = time.perf_counter()
    labels, n = winnow.label(volume, args.connectivity, return_N=True)
    if xp is not np:
        xp.cuda.runtime.deviceSynchronize()
    seconds = time.perf_counter() - start
    digests = whole_digests(labels, args.chunk)
    del labels, volume
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()
    return n, digests, seconds


def cluster_of(gpus, numpy_chunks, threads, share_gpu=False, task_threads=1):
    from distributed import Nanny, Scheduler, SpecCluster

    path = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH", "")) if p)
    workers = {}
    for i in range(gpus):
        env = dict(NO_MULTICAST, PYTHONPATH=path, OMP_NUM_THREADS=str(threads))
        if not numpy_chunks:
            env["CUDA_VISIBLE_DEVICES"] = "0" if share_gpu else str(i)
        workers[f"gpu{i}"] = {"cls": Nanny, "options": {"nthreads": task_threads, "env": env, "memory_limit": 0}}
    return SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}, workers=workers)


def busy_by_kind(task_stream):
    """Per task name (key prefix): tasks, summed compute seconds, and the wall span they covered."""
    from dask.utils import key_split

    kinds = defaultdict(lambda: [0, 0.0, float("inf"), 0.0])
    for record in task_stream:
        for part in record.get("startstops", ()):
            if part.get("action") != "compute":
                continue
            k = kinds[key_split(record["key"])]
            k[0] += 1
            k[1] += part["stop"] - part["start"]
            k[2] = min(k[2], part["start"])
            k[3] = max(k[3], part["stop"])
    return {name: (c, busy, stop - start) for name, (c, busy, start, stop) in kinds.items()}


STAGES = (("make + label", ("block", "winnow-label")),
          ("face exchange", ("winnow-part-farpieces", "winnow-pairs")),
          ("global merge", ("winnow-merge", "winnow-summary", "winnow-part-mergestatuses", "winnow-rows",
                            "winnow-offsets", "winnow-part-rowsummary", "winnow-numbering", "winnow-count",
                            "winnow-part-numberingofchunks", "winnow-part-rowoffsetsof", "winnow-table",
                            "winnow-part-tablestatistics", "winnow-statistics")))


def stage_split(task_stream):
    """Per stage (the task kinds of STAGES; everything else is the relabel and the digests): the
    busiest worker's compute seconds in it, and when its last task ended (seconds after the first
    task of the run started)."""
    from dask.utils import key_split

    stage_of = {kind: stage for stage, kinds in STAGES for kind in kinds}
    busy = defaultdict(lambda: defaultdict(float))
    ends = defaultdict(float)
    first = min((p["start"] for r in task_stream for p in r.get("startstops", ()) if p.get("action") == "compute"),
                default=0.0)
    for record in task_stream:
        stage = stage_of.get(key_split(record["key"]), "relabel")
        for part in record.get("startstops", ()):
            if part.get("action") == "compute":
                busy[stage][record.get("worker")] += part["stop"] - part["start"]
                ends[stage] = max(ends[stage], part["stop"] - first)
    return {stage: (max(busy[stage].values(), default=0.0), ends[stage])
            for stage in [s for s, _ in STAGES] + ["relabel"]}


def moved_between_workers(client):
    """What the workers fetched from each other since the last call, per task name: (results,
    bytes as dask sizes them); the logs are cleared."""
    from dask.utils import key_split

    logs = client.run(lambda dask_worker: list(dask_worker.transfer_incoming_log))
    client.run(lambda dask_worker: dask_worker.transfer_incoming_log.clear())
    moved = defaultdict(lambda: [0, 0])
    for log in logs.values():
        for entry in log:
            for key, nbytes in entry.get("keys", {}).items():
                moved[key_split(key)][0] += 1
                moved[key_split(key)][1] += nbytes
    return dict(moved)


def run(args, gpus, xp, expected_n, expected_digests):
    import dask.array as da
    from distributed import Client, get_task_stream, wait

    import winnow.dask as wd

    threads = max(1, (os.cpu_count() or 1) // gpus)
    with cluster_of(gpus, xp is np, threads, args.share_gpu, args.threads_per_worker) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(gpus)
        if args.mesh:
            return run_mesh(args, xp, expected_digests)
        # Warm-up on a volume of 2^3 chunks per worker: imports, CUDA contexts, CuPy's kernels.
        small = lazy_volume(args.kind, 2 * args.chunk, args.chunk, args.density, args.seed, xp)
        warm = wd.label(small, args.connectivity, stats=args.stats, progress=False)[0]
        da.map_blocks(digest, warm, dtype=np.uint64, chunks=(1, 1, 1), meta=np.zeros((0, 0, 0), np.uint64)).compute()
        darr = lazy_volume(args.kind, args.size, args.chunk, args.density, args.seed, xp)
        rows = []
        moved_between_workers(client)
        for rep in range(1, args.reps + 1):
            with get_task_stream(client) as stream:
                start = time.perf_counter()
                result = wd.label(darr, args.connectivity, stats=args.stats, progress=False)
                labels, n = result[0], result[1]
                called = time.perf_counter()
                if args.keep:
                    labels = labels.persist()
                    wait(labels)
                digests = da.map_blocks(digest, labels, dtype=np.uint64, chunks=(1, 1, 1),
                                        meta=np.zeros((0, 0, 0), np.uint64)).compute()
                done = time.perf_counter()
            kinds = busy_by_kind(stream.data)
            split = stage_split(stream.data)
            moved = moved_between_workers(client)
            equal = n == expected_n and np.array_equal(digests, expected_digests)
            del labels, result
            if rep:
                rows.append((called - start, done - called, done - start, equal, kinds, moved, split))
        return rows


def run_mesh(args, xp, expected):
    """winnow.dask.marching_cubes on the gyroid made on the workers; rows as run() gives them, the
    first two columns split at the moment the pieces reached the client (made and gathered; then
    joined into one mesh there), and the pieces' bytes."""
    from distributed import get_task_stream

    import winnow.dask as wd
    import winnow.dask._meshing as meshing

    assemble, seen = meshing._assemble, {}

    def timed_assemble(pieces, *rest):
        seen["gathered"] = time.perf_counter()
        seen["bytes"] = sum(a.nbytes for piece in pieces for a in piece if hasattr(a, "nbytes"))
        return assemble(pieces, *rest)

    meshing._assemble = timed_assemble
    wd.marching_cubes(lazy_gyroid(2 * args.chunk, args.chunk, xp), 0.0, progress=False)  # warm-up
    darr = lazy_gyroid(args.size, args.chunk, xp)
    rows = []
    for rep in range(1, args.reps + 1):
        with get_task_stream() as stream:
            start = time.perf_counter()
            mesh = wd.marching_cubes(darr, 0.0, progress=False)
            if xp is not np:
                xp.cuda.runtime.deviceSynchronize()
            done = time.perf_counter()
        equal = mesh_summary(mesh) == expected
        del mesh
        if rep:
            rows.append((seen["gathered"] - start, done - seen["gathered"], done - start, equal,
                         busy_by_kind(stream.data), {"pieces to the client": (1, seen["bytes"])}, {}))
    meshing._assemble = assemble
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--gpus", default="1,2", help="GPU counts to run, e.g. 1,2,4")
    ap.add_argument("--kind", default="random", choices=("random", "mri"))
    ap.add_argument("--density", type=float, default=0.3)
    ap.add_argument("--connectivity", type=int, default=26)
    ap.add_argument("--stats", action="store_true", help="statistics too (stats=True)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--numpy", action="store_true", help="NumPy chunks on CPU workers (the plumbing, no GPU)")
    ap.add_argument("--reference", default="cpu", choices=("cpu", "gpu"), help="where the whole-volume call runs")
    ap.add_argument("--mesh", action="store_true", help="winnow.dask.marching_cubes of a gyroid instead of labels")
    ap.add_argument("--share-gpu", action="store_true",
                    help="every worker on GPU 0 (several workers on a one-GPU machine: the placement, not the speed)")
    ap.add_argument("--threads-per-worker", type=int, default=1,
                    help="tasks a worker runs at once (2: one chunk's host work beside another's labeling on the GPU)")
    ap.add_argument("--tasks", type=int, default=4, help="task kinds shown per row, busiest first")
    ap.add_argument("--keep", action="store_true",
                    help="persist the labels on the workers (else each chunk's labels are digested and dropped)")
    args = ap.parse_args()
    if args.numpy:
        xp = np
    else:
        import cupy as xp
    import dask
    import distributed

    import winnow

    voxels = args.size**3
    where = "CPU" if args.numpy or args.reference == "cpu" else "GPU"
    if args.mesh:
        expected, t_whole = mesh_reference(args, xp)
        n_expected = None
        print(f"winnow {winnow.__version__} dask {dask.__version__} distributed {distributed.__version__}; "
              f"gyroid {args.size}^3 float32, {args.chunk}^3 chunks, level 0; one winnow.marching_cubes call on the "
              f"CPU: {t_whole * 1e3:.1f} ms, {expected[0]} vertices, {expected[1]} triangles", flush=True)
        head = ("| GPUs | pieces made and gathered in the client s | joined there s | total s | G voxels/s | "
                "speed-up | equal | busiest tasks ")
    else:
        n_expected, expected, t_whole = reference(args, xp)
        print(f"winnow {winnow.__version__} dask {dask.__version__} distributed {distributed.__version__}; "
              f"{args.kind} {args.size}^3 u8 (density {args.density}), {args.chunk}^3 chunks, "
              f"{args.connectivity}-connectivity{', stats' if args.stats else ''}; one winnow.label call on the "
              f"{where}: {t_whole * 1e3:.1f} ms, N = {n_expected}", flush=True)
        head = "| GPUs | label() s (stages 1-2) | relabel s | total s | G voxels/s | speed-up | equal | busiest tasks "
    table = [head + "(count, busy s, span s) | fetched from other workers (results, MB) |",
             "|---:|---:|---:|---:|---:|---:|---|---|---|"]
    splits = ["| GPUs | " + " | ".join(f"{stage} (busiest worker s, ends at s)" for stage, _ in STAGES)
              + " | relabel + digest (busiest worker s, ends at s) |", "|---:|---:|---:|---:|---:|"]
    first = None
    for gpus in (int(g) for g in args.gpus.split(",")):
        try:
            rows = run(args, gpus, xp, n_expected, expected)
        except Exception as error:  # noqa: BLE001 (one GPU count failing, e.g. out of memory, ends its row only)
            line = f"| {gpus} | failed: {type(error).__name__}: {str(error)[:200]} |"
            table.append(line)
            print(line, flush=True)
            continue
        call = statistics.median(r[0] for r in rows)
        relabel = statistics.median(r[1] for r in rows)
        total = statistics.median(r[2] for r in rows)
        first = first or total
        kinds = rows[-1][4]
        top = sorted(kinds.items(), key=lambda kv: -kv[1][1])[:args.tasks]
        busiest = "; ".join(f"{name} ({c}, {busy:.2f}, {span:.2f})" for name, (c, busy, span) in top)
        moved = sorted(rows[-1][5].items(), key=lambda kv: -kv[1][1])
        fetched = "; ".join(f"{name} ({c}, {b / 1e6:.1f})" for name, (c, b) in moved) or "none"
        line = (f"| {gpus} | {call:.3f} | {relabel:.3f} | {total:.3f} | {voxels / total / 1e9:.2f} | "
                f"{first / total:.2f}x | {all(r[3] for r in rows)} | {busiest} | {fetched} |")
        table.append(line)
        print(line, flush=True)
        split = " | ".join(f"{busy:.2f}, {end:.2f}" for busy, end in rows[-1][6].values())
        splits.append(f"| {gpus} | {split} |")
    print("\n" + "\n".join(table))
    if not args.mesh:
        print("\nTime split of the last run (task stream; stages overlap, the ends say which finished when):\n"
              + "\n".join(splits))


if __name__ == "__main__":
    main()
