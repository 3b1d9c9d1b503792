#!/usr/bin/env python3
"""Flagged compaction from Python against the C++ device API's flagged call on the same arrays,
in one process (the target: winnow.compact(a, mask) within 1.3x of the C++ call), beside select,
CuPy's a[mask] and a[a > t], and torch.masked_select.

    build/python-venv/bin/python bench/python_flagged.py [--log2n 28] [--reps 20] [--kept 0.5,0.1]

On a GPU host (scripts/python-test.sh BUILD --offline has built the package there, with CuPy and
optionally PyTorch installed). For each kept fraction: a random float32 array of 2^log2n elements
and mask = a > t on the device, made once; each Python call is followed by a stream sync (the
call waits for its count anyway), median of --reps after a warm-up. The C++ row is
_winnow._time_compact_flagged_device: the same device API call winnow.compact makes
(winnow::cuda::compact_flagged with the stream's workspace) looped in C++, each call with its
count read back (wall time), and its CUDA-event time alone. Printed: ms per call and
Python / C++ (target <= 1.30).
"""

import argparse

import numpy as np

import winnow
from winnow import _winnow
from bench_common import synced_median


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--kept", default="0.5,0.1")
    args = parser.parse_args()
    import cupy

    try:
        import torch
    except ImportError:
        torch = None
    device = cupy.cuda.Device()
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(device.id)['name'].decode()}, n = 2^{args.log2n} float32")
    print("| case | kept | ms | Python / C++ wall |\n|---|---:|---:|---:|")
    sync = cupy.cuda.get_current_stream().synchronize
    rng = cupy.random.default_rng(1)
    a = rng.random(1 << args.log2n, dtype=cupy.float32)
    for kept in (float(k) for k in args.kept.split(",")):
        threshold = float(1.0 - kept)
        mask = a > threshold
        out = cupy.empty_like(a)
        ours = synced_median(lambda: winnow.compact(a, mask), sync, args.reps)
        into = synced_median(lambda: winnow.compact(a, mask, out=out), sync, args.reps)
        stream = cupy.cuda.get_current_stream().ptr

        def view(x):
            return _winnow.DeviceArray(x.data.ptr, x.dtype.kind, x.itemsize, x.shape, (1,), device.id, stream)

        wall, events = _winnow._time_compact_flagged_device(view(a), view(mask), view(out), args.reps + 3)
        cpp, cpp_event = float(np.median(wall[3:])), float(np.median(events[3:]))
        rows = [("winnow.compact(a, mask)", ours), ("winnow.compact(a, mask, out=)", into),
                ("C++ cuda::compact_flagged + count (wall)", cpp), ("C++ cuda::compact_flagged (events)", cpp_event),
                ("winnow.select(a, '>', t)", synced_median(lambda: winnow.select(a, ">", threshold), sync, args.reps)),
                ("cupy a[mask]", synced_median(lambda: a[mask], sync, args.reps)),
                ("cupy a[a > t]", synced_median(lambda: a[a > threshold], sync, args.reps))]
        if torch is not None:
            ta = torch.as_tensor(a, device="cuda")
            tm = torch.as_tensor(mask, device="cuda")
            tsync = torch.cuda.synchronize
            rows.append(("winnow.compact(torch)", synced_median(lambda: winnow.compact(ta, tm), tsync, args.reps)))
            rows.append(("torch.masked_select", synced_median(lambda: torch.masked_select(ta, tm), tsync, args.reps)))
        for name, ms in rows:
            print(f"| {name} | {kept:.0%} | {ms:.3f} | {ms / cpp:.2f} |", flush=True)
        verdict = "met" if ours / cpp <= 1.3 else "not met"
        print(f"\nkept {kept:.0%}: winnow.compact / C++ flagged call = {ours / cpp:.2f} (target <= 1.30: {verdict})\n")


if __name__ == "__main__":
    main()
