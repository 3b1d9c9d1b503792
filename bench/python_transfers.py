#!/usr/bin/env python3
"""Labeling a NumPy (host) mask with backend="cuda" against the two PCIe transfers it cannot
avoid (issue 18's target: no more than the transfers plus 20 %).

winnow.label(mask, backend="cuda") on a random 8192^2 bool mask (density 0.5, 8-connectivity)
copies the mask in (64 MiB), labels it and copies the uint32 labels out (256 MiB) through
pinned staging (src/common/cuda/staging.cu) into a fresh NumPy array. The reference is the two
transfers alone between pinned host memory and the device, measured in the same process with
CuPy (or PyTorch): H2D of 64 MiB + D2H of 256 MiB, each timed with a stream sync.
ratio = label / (H2D + D2H).

Also printed, to show where the time goes: the same two transfers from and into pageable NumPy
memory through the array library (what a user who copies by hand pays), and the labeling of
the mask already on the device (winnow.label on a CuPy / PyTorch array, then a sync).

    python3 bench/python_transfers.py [--side 8192] [--reps 15] [--library cupy|torch]
"""

import argparse

import numpy as np

import winnow
from bench_common import synced_median


def median_ms(call, sync, reps):
    return synced_median(call, sync, reps)


def pinned_transfers(name, mask_bytes, label_bytes):
    """(h2d, d2h, h2d pageable, d2h pageable, device labeling) callables and a sync for one library."""
    if name == "cupy":
        import cupy

        def pinned(nbytes):
            memory = cupy.cuda.alloc_pinned_memory(nbytes)
            return np.frombuffer(memory, np.uint8, nbytes)

        host_in, host_out = pinned(mask_bytes), pinned(label_bytes)
        dev_in, dev_out = cupy.empty(mask_bytes, np.uint8), cupy.empty(label_bytes, np.uint8)
        stream = cupy.cuda.get_current_stream()
        pageable_in = np.random.default_rng(1).integers(0, 2, mask_bytes, dtype=np.uint8)
        return (lambda: dev_in.set(host_in, stream=stream), lambda: dev_out.get(stream=stream, out=host_out),
                lambda: cupy.asarray(pageable_in), lambda: cupy.asnumpy(dev_out),
                cupy.asarray, stream.synchronize)
    import torch

    host_in = torch.empty(mask_bytes, dtype=torch.uint8).pin_memory()
    host_out = torch.empty(label_bytes, dtype=torch.uint8).pin_memory()
    dev_in = torch.empty(mask_bytes, dtype=torch.uint8, device="cuda")
    dev_out = torch.empty(label_bytes, dtype=torch.uint8, device="cuda")
    pageable_in = torch.from_numpy(np.random.default_rng(1).integers(0, 2, mask_bytes, dtype=np.uint8))
    return (lambda: dev_in.copy_(host_in, non_blocking=True), lambda: host_out.copy_(dev_out, non_blocking=True),
            lambda: pageable_in.to("cuda"), lambda: dev_out.cpu(),
            lambda a: torch.from_numpy(a).to("cuda"), torch.cuda.synchronize)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--library", default="cupy", choices=("cupy", "torch"))
    args = parser.parse_args()
    side = args.side
    mask = np.random.default_rng(7).random((side, side)) < 0.5
    h2d, d2h, h2d_pageable, d2h_pageable, to_device, sync = pinned_transfers(args.library, mask.nbytes, mask.size * 4)
    print(f"device: {winnow.devices()[0]['name'] if winnow.devices() else 'none'}; {side}^2 mask, {args.library}, "
          f"median of {args.reps}")
    # Correctness first: the host path's labels are the device path's.
    on_device = to_device(mask)
    host_labels = winnow.label(mask, backend="cuda")
    device_labels = winnow.label(on_device)
    reference = device_labels.get() if args.library == "cupy" else device_labels.cpu().numpy()
    assert np.array_equal(host_labels.view(np.uint32), reference.view(np.uint32)), "host and device labels differ"
    del host_labels, device_labels, reference

    rows = {
        "H2D 64 MiB, pinned": median_ms(h2d, sync, args.reps),
        "D2H 256 MiB, pinned": median_ms(d2h, sync, args.reps),
        "H2D, pageable (library)": median_ms(h2d_pageable, sync, args.reps),
        "D2H, pageable (library)": median_ms(d2h_pageable, sync, args.reps),
        "label on the device": median_ms(lambda: winnow.label(on_device), sync, args.reps),
        "label from NumPy, backend=cuda": median_ms(lambda: winnow.label(mask, backend="cuda"), sync, args.reps),
    }
    transfers = rows["H2D 64 MiB, pinned"] + rows["D2H 256 MiB, pinned"]
    print("| step | ms |")
    print("|---|---:|")
    for name, ms in rows.items():
        print(f"| {name} | {ms:.2f} |")
    print(f"| pinned H2D + D2H | {transfers:.2f} |")
    ratio = rows["label from NumPy, backend=cuda"] / transfers
    verdict = "met" if ratio <= 1.2 else "not met"
    print(f"\nratio label from NumPy / pinned transfers = {ratio:.2f} (target <= 1.20: {verdict})")


if __name__ == "__main__":
    main()
