#!/usr/bin/env python3
"""Per-call cost of the Python layer over the C++ device API, on device arrays (issue target:
at most 15 us per call).

For each call (compact, select, flatnonzero, label) on small CuPy arrays (and PyTorch tensors
when installed), in one process:
  - ``api``: the extension's device function called directly with buffers allocated once
    beforehand, then the stream synchronised: the C++ device API plus the nanobind call;
  - ``python``: the public function (argument checks, allocation of out / count / temporary
    storage through the caller's library, two extension calls: size then run, reading the
    count), then the stream synchronised.
Both are medians of many calls after a warm-up; ``overhead`` = python - api. Small sizes make
the kernels launch-bound, so the difference is the layer's own cost.

    python3 bench/python_overhead.py [--reps 2000] [--sizes 4096,65536]
"""

import argparse
import statistics
import time

import numpy as np

import winnow
from winnow import _winnow


def median_us(call, sync, reps):
    for _ in range(20):
        call()
    sync()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        sync()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def cases(xp, name, n, rng):
    """(label, python call, direct extension call, sync) for one library and size."""
    if name == "cupy":
        to_device = xp.asarray
        empty = lambda shape, dtype: xp.empty(shape, dtype=dtype)  # noqa: E731
        stream = lambda: xp.cuda.get_current_stream().ptr  # noqa: E731
        sync = lambda: xp.cuda.get_current_stream().synchronize()  # noqa: E731
    else:
        to_device = lambda a: xp.from_numpy(a).to("cuda")  # noqa: E731
        empty = lambda shape, dtype: xp.empty(shape, dtype=getattr(xp, {"uint32": "int32", "uint64": "int64"}.get(np.dtype(dtype).name, np.dtype(dtype).name)), device="cuda")  # noqa: E731,E501
        stream = lambda: xp.cuda.current_stream().cuda_stream  # noqa: E731
        sync = xp.cuda.synchronize
    a = to_device(rng.standard_normal(n).astype(np.float32))
    mask = a > 0.5
    side = int(np.sqrt(n))
    image = to_device(rng.random((side, side)) < 0.5)
    out = empty(n, np.float32)
    indices = empty(n, np.int64)
    labels = empty((side, side), np.uint32)
    count64 = empty(1, np.uint64)
    count32 = empty(1, np.uint32)

    def direct(function, *args):
        temp = empty(max(int(function(None, *args)), 1), np.uint8)
        return lambda: function(temp, *args)

    s = stream()
    return [
        ("compact", lambda: winnow.compact(a, mask), direct(_winnow.compact_device, a, mask, out, count64, True, s)),
        ("select", lambda: winnow.select(a, ">", 0.5), direct(_winnow.select_device, a, 0, 0.5, out, count64, True, s)),
        ("flatnonzero", lambda: winnow.flatnonzero(mask), direct(_winnow.flatnonzero_device, mask, indices, count64, s)),
        ("label", lambda: winnow.label(image), direct(_winnow.label_device, image, labels, count32, 8, s)),
    ], sync


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sizes", default="4096,65536")
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    print(f"device: {winnow.devices()[0]['name'] if winnow.devices() else 'none'}")
    print("| library | call | n | api us | python us | overhead us |")
    print("|---|---|---:|---:|---:|---:|")
    for name in ("cupy", "torch"):
        try:
            xp = __import__(name)
        except ImportError:
            print(f"({name} not installed)")
            continue
        for n in (int(s) for s in args.sizes.split(",")):
            calls, sync = cases(xp, name, n, rng)
            for label, python_call, api_call in calls:
                api = median_us(api_call, sync, args.reps)
                python = median_us(python_call, sync, args.reps)
                print(f"| {name} | {label} | {n} | {api:.1f} | {python:.1f} | {python - api:.1f} |")


if __name__ == "__main__":
    main()
