#!/usr/bin/env python3
"""winnow.flatnonzero against numpy.flatnonzero on NumPy arrays, 10^2 to 10^7 elements, float32
and bool, 1 % and 50 % non-zero (the target: at least NumPy's speed at every size).

    build/python-venv/bin/python bench/python_flatnonzero.py [--reps 5]

Each time is the best of --reps rounds of enough calls to fill a few milliseconds. Printed:
microseconds per call and NumPy / winnow (1 or more: winnow as fast or faster).
"""

import argparse
import os
import time

import numpy as np

import winnow


def best_us(call, calls, reps):
    call()
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, OMP_WAIT_POLICY "
          f"{os.environ.get('OMP_WAIT_POLICY', '(libgomp default)')}, winnow {winnow.__file__}")
    print("| n | dtype | non-zero | winnow us | numpy us | numpy / winnow |\n|---:|---|---:|---:|---:|---:|")
    for n in (10**2, 10**3, 10**4, 10**5, 10**6, 10**7):
        for dtype in ("float32", "bool"):
            for density in (0.01, 0.5):
                a = (rng.random(n) < density).astype(dtype)
                calls = max(1, 200_000 // n)
                ours = best_us(lambda: winnow.flatnonzero(a), calls, args.reps)
                theirs = best_us(lambda: np.flatnonzero(a), calls, args.reps)
                print(f"| {n:,} | {dtype} | {density:.0%} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
