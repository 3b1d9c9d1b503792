#!/usr/bin/env python3
"""A busy machine's cliff: winnow's Python calls timed on an idle machine and while another
process spins on one core, with OpenMP's waiting policy as winnow's import sets it (passive,
unless OMP_WAIT_POLICY is set) and as libgomp's default (active spinning for a while).

    build/python-venv/bin/python bench/python_busy.py [--reps 30] [--policies winnow,active]

Each policy runs in a child process (libgomp reads OMP_WAIT_POLICY when it loads). The spinner is
`python -c "while True: pass"`, pinned to the machine's last core with os.sched_setaffinity; the
timed process is not pinned, as a user's is not. Cases: a 2D label of the bundled 1000 x 872
photograph's mask, select, compact and flatnonzero of its 872,000 pixels as float32, select of
10^4 and 10^5 elements, a 64^3 volume's label. Prints the median of each (ms), busy / idle, and
the load average before the run (other work on the machine shows there).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def cases():
    import numpy as np
    from skimage import io

    import winnow

    image = io.imread(ROOT / "examples" / "data" / "hubble_deep_field.jpg").mean(axis=2).astype(np.float32)
    mask = image > np.median(image)
    rng = np.random.default_rng(0)
    small = rng.random(10**4).astype(np.float32)
    medium = rng.random(10**5).astype(np.float32)
    volume = rng.random((64, 64, 64)) < 0.3
    threshold = float(np.median(image))
    return {
        "label 2D 1000x872 (8-conn)": lambda: winnow.label(mask, 8),
        "select 872k float32": lambda: winnow.select(image, ">", threshold),
        "compact 872k float32": lambda: winnow.compact(image, mask),
        "flatnonzero 872k": lambda: winnow.flatnonzero(mask),
        "select 10^5 float32": lambda: winnow.select(medium, ">", 0.5),
        "select 10^4 float32": lambda: winnow.select(small, ">", 0.5),
        "label 3D 64^3 (26-conn)": lambda: winnow.label(volume, 26),
    }


def median_ms(call, reps):
    for _ in range(3):
        call()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def spinner():
    """A process spinning on the last core (pinned where the OS allows)."""
    code = ("import os, sys\ntry:\n    os.sched_setaffinity(0, {int(sys.argv[1])})\n"
            "except (AttributeError, OSError):\n    pass\nwhile True:\n    pass\n")
    return subprocess.Popen([sys.executable, "-c", code, str((os.cpu_count() or 1) - 1)])


def child(reps):
    """Runs in a child process: the cases idle, then busy; JSON on stdout."""
    timed = cases()
    idle = {name: median_ms(call, reps) for name, call in timed.items()}
    spin = spinner()
    try:
        time.sleep(0.5)
        busy = {name: median_ms(call, reps) for name, call in timed.items()}
    finally:
        spin.kill()
        spin.wait()
    import winnow

    print(json.dumps({"idle": idle, "busy": busy, "policy": os.environ.get("OMP_WAIT_POLICY", "(libgomp default)"),
                      "version": winnow.__version__}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--policies", default="winnow,active", help="winnow (as the import sets it), active, passive")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.reps)
        return
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}, "
          f"{os.getloadavg()[1]:.2f}, {os.getloadavg()[2]:.2f}")
    for policy in args.policies.split(","):
        env = dict(os.environ)
        env.pop("OMP_WAIT_POLICY", None)
        if policy != "winnow":
            env["OMP_WAIT_POLICY"] = policy
        out = subprocess.run([sys.executable, __file__, "--child", "--reps", str(args.reps)], env=env,
                             capture_output=True, text=True, check=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        print(f"\nOMP_WAIT_POLICY: {policy} (in the process: {result['policy']})")
        print("| case | idle ms | busy ms | busy / idle |\n|---|---:|---:|---:|")
        for name, idle in result["idle"].items():
            busy = result["busy"][name]
            print(f"| {name} | {idle:.3f} | {busy:.3f} | {busy / idle:.2f} |")


if __name__ == "__main__":
    main()
