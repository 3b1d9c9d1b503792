"""What the Python benchmark scripts share: the random masks of the GPU labeling benchmarks (for
label_peers.py, label_volume_peers.py, label_volume_cpu_peers.py) and the median timers (those and
label_multilabel_peers.py, python_overhead.py, python_ratios.py, python_transfers.py).

fmix32_mask builds the masks of bench_label_gpu and bench_label_volume_gpu (bench/random_mask.cuh):
element i (linear index, x fastest) is 1 when fmix32(i ^ seed * 0x9E3779B9) < density * 2^32.
"""
import statistics
import time

import numpy as np


def fmix32_mask(xp, n, seed, density):
    """The n mask bytes as a flat uint8 array of module xp (numpy or cupy)."""
    i = xp.arange(n, dtype=xp.uint32)
    h = i ^ xp.uint32((seed * 0x9E3779B9) & 0xFFFFFFFF)
    h ^= h >> xp.uint32(16)
    h *= xp.uint32(0x85EBCA6B)
    h ^= h >> xp.uint32(13)
    h *= xp.uint32(0xC2B2AE35)
    h ^= h >> xp.uint32(16)
    cut = np.uint32(min(int(density * 4294967296.0), 0xFFFFFFFF))
    return (h < cut).astype(xp.uint8)


def tiled_mni152_mask(path, times=(3, 2, 3)):
    """The bundled MNI152 grey-matter map (NIfTI-1, uint8, gzipped) > 128, repeated times = (x, y, z)
    times, as a (z, y, x) uint8 array: the real volume of bench_label_volume_gpu."""
    import gzip
    import struct
    data = gzip.open(path).read()
    dims = struct.unpack("<8h", data[40:56])
    datatype = struct.unpack("<h", data[70:72])[0]
    if dims[0] != 3 or datatype != 2:  # 2: uint8
        raise ValueError(f"{path}: expected a 3D uint8 NIfTI-1 volume")
    offset = int(struct.unpack("<f", data[108:112])[0])
    nx, ny, nz = dims[1:4]
    vol = np.frombuffer(data, np.uint8, count=nx * ny * nz, offset=offset).reshape(nz, ny, nx)
    return np.tile((vol > 128).astype(np.uint8), (times[2], times[1], times[0]))


def gpu_median_ms(cp, f, reps, warmup=3):
    """Median milliseconds of reps calls of f between CUDA events on the null stream, after warmup calls."""
    for _ in range(warmup):
        f()
    cp.cuda.Stream.null.synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def cpu_median_ms(f, reps):
    """Median wall-clock milliseconds of reps calls of f."""
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def synced_median(call, sync, reps, warmup=1, unit=1e3):
    """Median wall-clock time of reps calls of call, each followed by sync(), after warmup calls;
    in seconds times unit (1e3: milliseconds, 1e6: microseconds)."""
    for _ in range(warmup):
        call()
    sync()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        sync()
        samples.append((time.perf_counter() - start) * unit)
    return statistics.median(samples)
