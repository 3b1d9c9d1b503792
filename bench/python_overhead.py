#!/usr/bin/env python3
"""Per-call cost of the Python layer over the C++ device API, on device arrays (issue 18's
target: at most 15 us per call).

For each call (compact, select, flatnonzero, label) on small CuPy arrays and PyTorch CUDA
tensors (each when installed), in one process:
  - ``api``: the C++ device API through the extension: its device function called directly on
    pointers to buffers allocated once beforehand (temporary storage: the extension's, kept per
    device and stream), the count left on the device, then the stream synchronised;
  - ``python``: the public function (argument checks, the output allocated through the caller's
    library, one extension call, and for the compactions the count read back: the output's
    length needs it), then the stream synchronised.
Both are medians of many calls after a warm-up; ``overhead`` = python - api. Small sizes make
the kernels launch-bound, so the difference is the layer's own cost.

    python3 bench/python_overhead.py [--reps 2000] [--sizes 4096,65536] [--libraries cupy,torch]
"""

import argparse

import numpy as np

import winnow
from winnow import _winnow
from bench_common import synced_median


def median_us(call, sync, reps):
    return synced_median(call, sync, reps, warmup=50, unit=1e6)


def library(name):
    """(module, to_device, empty, pointer, stream handle, sync) for CuPy or PyTorch."""
    xp = __import__(name)
    if name == "cupy":
        return (xp, xp.asarray, lambda shape, dtype: xp.empty(shape, dtype=dtype), lambda a: a.data.ptr,
                lambda: xp.cuda.get_current_stream().ptr, lambda: xp.cuda.get_current_stream().synchronize())
    torch_dtype = {"bool": xp.bool, "float32": xp.float32, "int64": xp.int64, "uint32": xp.int32}
    return (xp, lambda a: xp.from_numpy(a).to("cuda"),
            lambda shape, dtype: xp.empty(shape, dtype=torch_dtype[np.dtype(dtype).name], device="cuda"),
            lambda a: a.data_ptr(), lambda: xp.cuda.current_stream().cuda_stream, xp.cuda.synchronize)


def cases(name, n, rng):
    """(call, python call, api call) for one library and size, and the library's sync."""
    xp, to_device, empty, pointer, stream, sync = library(name)
    a = to_device(rng.standard_normal(n).astype(np.float32))
    mask = a > 0.5
    side = int(np.sqrt(n))
    image = to_device(rng.random((side, side)) < 0.5)
    out = empty(n, np.float32)
    indices = empty(n, np.int64)
    labels = empty((side, side), np.uint32)
    s, dev = stream(), 0
    pa, pm, po, pi, pimg, plab = (pointer(x) for x in (a, mask, out, indices, image, labels))
    return [
        ("compact", lambda: winnow.compact(a, mask),
         lambda: _winnow.compact_device(pa, pm, po, n, 4, True, dev, s, False)),
        ("select", lambda: winnow.select(a, ">", 0.5),
         lambda: _winnow.select_device(pa, "f", 4, 0, 0.5, po, n, True, dev, s, False)),
        ("flatnonzero", lambda: winnow.flatnonzero(mask),
         lambda: _winnow.flatnonzero_device(pm, "b", 1, pi, n, dev, s, False)),
        ("label", lambda: winnow.label(image),
         lambda: _winnow.label_device(pimg, side, side, side, plab, 8, dev, s, False)),
    ], sync


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sizes", default="4096,65536")
    parser.add_argument("--libraries", default="cupy,torch")
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    print(f"device: {winnow.devices()[0]['name'] if winnow.devices() else 'none'}")
    print("| library | call | n | api us | python us | overhead us |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.libraries.split(","):
        try:
            __import__(name)
        except ImportError:
            print(f"({name} not installed)")
            continue
        for n in (int(s) for s in args.sizes.split(",")):
            calls, sync = cases(name, n, rng)
            for label, python_call, api_call in calls:
                api = median_us(api_call, sync, args.reps)
                python = median_us(python_call, sync, args.reps)
                print(f"| {name} | {label} | {n} | {api:.1f} | {python:.1f} | {python - api:.1f} |", flush=True)


if __name__ == "__main__":
    main()
